{# A resource's comments and the form to add one (the comments module):
   {% include "_comments.tpl" %} where `rsc` is the resource. The list is a
   live block: an approved comment appears on open pages. The form is outside
   it, so what a visitor is typing is never replaced. The page stays one
   cached copy for every anonymous visitor: the ticket against bots is asked
   for by comments.js when the visitor starts typing. #}
{% set comments = m.comments(rsc.id) %}
<section class="comments" id="comments" aria-labelledby="comments-title">
  <h2 id="comments-title">{{ _("Comments") }}</h2>
  {% call live("comments/" ~ rsc.id) %}
  {% if comments %}
  <p class="comment-count">{{ _n("{n} comment", "{n} comments", comments|length) }}</p>
  <ol class="comment-list">
  {% for c in comments %}
    <li class="comment depth-{{ c.depth }}" id="comment-{{ c.id }}">
      <p class="comment-meta"><strong class="comment-author">{% if c.url %}<a href="{{ c.url }}" rel="nofollow ugc noopener">{{ c.name }}</a>{% else %}{{ c.name }}{% endif %}</strong>
        <time datetime="{{ c.created }}">{{ c.created|date }}</time></p>
      <div class="comment-body">{{ c.body }}</div>
      <button type="button" class="comment-reply" data-reply="{{ c.id }}" data-name="{{ c.name }}" hidden>{{ _("Reply") }}<span class="visually-hidden"> {{ _("to {name}", name=c.name) }}</span></button>
    </li>
  {% endfor %}
  </ol>
  {% else %}
  <p class="comment-none">{{ _("No comments yet.") }}</p>
  {% endif %}
  {% endcall %}
  <form method="post" action="{{ url('comment_post') }}" class="form comment-form" data-comment-form data-ticket-for="comments:{{ rsc.id }}">
    <h3>{{ _("Leave a comment") }}</h3>
    <input type="hidden" name="rsc" value="{{ rsc.id }}">
    <input type="hidden" name="parent" value="">
    <input type="hidden" name="_ticket" value="">
    <p class="comment-replying" hidden>{{ _("Replying to") }} <strong></strong>. <button type="button" class="comment-cancel">{{ _("Cancel the reply") }}</button></p>
    {% if request.user_id %}
    {{ csrf_field() }}
    <p class="hint">{{ _("You comment as yourself; your comment is shown at once or after a moderator's look, as the site decides.") }}</p>
    {% else %}
    <label>{{ _("Name") }} <input name="name" required maxlength="100" autocomplete="name"></label>
    <label>{{ _("E-mail address") }} <small>{{ _("(never shown)") }}</small> <input type="email" name="email" required maxlength="254" autocomplete="email"></label>
    <label>{{ _("Website") }} <small>{{ _("(optional)") }}</small> <input type="url" name="url" maxlength="500" autocomplete="url" placeholder="https://"></label>
    {% endif %}
    <div class="comment-hp" aria-hidden="true"><label>{{ _("Leave this empty") }} <input name="extra_info" tabindex="-1" autocomplete="off"></label></div>
    <label>{{ _("Comment") }} <textarea name="body" rows="5" required maxlength="5000"></textarea></label>
    <p class="comment-status" role="status" aria-live="polite"></p>
    <button type="submit" class="button">{{ _("Post the comment") }}</button>
  </form>
</section>
{{ lib("css/comments.css") }}
{{ script_texts("js/comments.js") }}
{{ lib("js/texts.js", "js/comments.js") }}

{# A resource's comments and the form to add one (the comments module):
   {% include "_comments.tpl" %} where `rsc` is the resource. The list is a
   live block: an approved comment appears on open pages. The form is outside
   it, so what a visitor is typing is never replaced. The page stays one
   cached copy for every anonymous visitor: the ticket against bots is asked
   for by comments.js when the visitor starts typing. #}
{% set comments = m.comments(rsc.id) %}
<section class="comments" id="comments" aria-labelledby="comments-title">
  <h2 id="comments-title">Comments</h2>
  {% call live("comments/" ~ rsc.id) %}
  {% if comments %}
  <p class="comment-count">{{ comments|length }} comment{% if comments|length != 1 %}s{% endif %}</p>
  <ol class="comment-list">
  {% for c in comments %}
    <li class="comment depth-{{ c.depth }}" id="comment-{{ c.id }}">
      <p class="comment-meta"><strong class="comment-author">{% if c.url %}<a href="{{ c.url }}" rel="nofollow ugc noopener">{{ c.name }}</a>{% else %}{{ c.name }}{% endif %}</strong>
        <time datetime="{{ c.created }}">{{ c.created|date }}</time></p>
      <div class="comment-body">{{ c.body }}</div>
      <button type="button" class="comment-reply" data-reply="{{ c.id }}" data-name="{{ c.name }}" hidden>Reply<span class="visually-hidden"> to {{ c.name }}</span></button>
    </li>
  {% endfor %}
  </ol>
  {% else %}
  <p class="comment-none">No comments yet.</p>
  {% endif %}
  {% endcall %}
  <form method="post" action="{{ url('comment_post') }}" class="form comment-form" data-comment-form>
    <h3>Leave a comment</h3>
    <input type="hidden" name="rsc" value="{{ rsc.id }}">
    <input type="hidden" name="parent" value="">
    <input type="hidden" name="_ticket" value="">
    <p class="comment-replying" hidden>Replying to <strong></strong>. <button type="button" class="comment-cancel">Cancel the reply</button></p>
    {% if request.user_id %}
    {{ csrf_field() }}
    <p class="hint">You comment as yourself; your comment is shown at once or after a moderator's look, as the site decides.</p>
    {% else %}
    <label>Name <input name="name" required maxlength="100" autocomplete="name"></label>
    <label>E-mail address <small>(never shown)</small> <input type="email" name="email" required maxlength="254" autocomplete="email"></label>
    <label>Website <small>(optional)</small> <input type="url" name="url" maxlength="500" autocomplete="url" placeholder="https://"></label>
    {% endif %}
    <div class="comment-hp" aria-hidden="true"><label>Leave this empty <input name="extra_info" tabindex="-1" autocomplete="off"></label></div>
    <label>Comment <textarea name="body" rows="5" required maxlength="5000"></textarea></label>
    <p class="comment-status" role="status" aria-live="polite"></p>
    <button type="submit" class="button">Post the comment</button>
  </form>
</section>
{{ lib("css/comments.css") }}
{{ lib("js/comments.js") }}

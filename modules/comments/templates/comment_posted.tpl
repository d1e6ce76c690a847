{# The answer to the comment form of a browser without script (the comments
   module's `comment_post` rule). `outcome`: approved never comes here (it
   goes back to the page); pending, confirm (no ticket: check and post
   again), invalid (`field`, `problem`), closed, too_many (`retry_after`),
   failed. In the site's own frame through auth_base.tpl. #}
{% extends "auth_base.tpl" %}
{% block title %}{{ _("Your comment") }}{% endblock %}
{% block content %}
<section class="auth comment-answer">
{% if outcome == "pending" %}
  <h1>{{ _("Thank you") }}</h1>
  <p role="status">{{ _("Your comment will appear once a moderator has read it.") }}</p>
{% elif outcome == "closed" %}
  <h1>{{ _("Comments are closed here") }}</h1>
  <p>{{ _("This page does not take comments.") }}</p>
{% elif outcome == "too_many" %}
  <h1>{{ _("One moment") }}</h1>
  <p role="alert">{{ _n("Many comments came from your address just now. Please try again in {n} second.", "Many comments came from your address just now. Please try again in {n} seconds.", retry_after) }}</p>
{% elif outcome == "failed" %}
  <h1>{{ _("Not posted") }}</h1>
  <p role="alert">{{ _("Your comment could not be stored. It is below, so nothing is lost: please try again in a moment.") }}</p>
{% else %}
  <h1>{% if outcome == "confirm" %}{{ _("Post your comment") }}{% else %}{{ _("Please check your comment") }}{% endif %}</h1>
  {% if outcome == "confirm" %}<p>{{ _("Check your comment, then post it.") }}</p>{% endif %}
  {% if problem %}<p class="error" role="alert" id="comment-problem">{{ problem }}</p>{% endif %}
{% endif %}
{% if outcome in ["confirm", "invalid", "failed", "too_many"] %}
  <form method="post" action="{{ url('comment_post') }}" class="auth-form">
    <input type="hidden" name="rsc" value="{{ typed.rsc }}">
    <input type="hidden" name="parent" value="{{ typed.parent }}">
    <input type="hidden" name="_ticket" value="{{ ticket or '' }}">
    {% if request.user_id %}{{ csrf_field() }}{% else %}
    <p><label for="c-name">{{ _("Name") }}</label> <input id="c-name" name="name" required maxlength="100" value="{{ typed.name }}" autocomplete="name"{% if field == "name" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}></p>
    <p><label for="c-email">{{ _("E-mail address") }} {{ _("(never shown)") }}</label> <input id="c-email" type="email" name="email" required maxlength="254" value="{{ typed.email }}" autocomplete="email"{% if field == "email" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}></p>
    <p><label for="c-url">{{ _("Website") }} {{ _("(optional)") }}</label> <input id="c-url" type="url" name="url" maxlength="500" value="{{ typed.url }}" autocomplete="url"{% if field == "url" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}></p>
    {% endif %}
    <p><label for="c-body">{{ _("Comment") }}</label> <textarea id="c-body" name="body" rows="6" required maxlength="5000"{% if field == "body" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}>{{ typed.body }}</textarea></p>
    <p><button type="submit">{{ _("Post the comment") }}</button></p>
  </form>
{% endif %}
{% if back %}<p><a href="{{ back }}">{{ _("Back to the page") }}</a></p>{% endif %}
</section>
{% endblock %}

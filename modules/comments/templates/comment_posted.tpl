{# The answer to the comment form of a browser without script (the comments
   module's `comment_post` rule). `outcome`: approved never comes here (it
   goes back to the page); pending, confirm (no ticket: check and post
   again), invalid (`field`, `problem`), closed, too_many (`retry_after`),
   failed. In the site's own frame through auth_base.tpl. #}
{% extends "auth_base.tpl" %}
{% block title %}Your comment{% endblock %}
{% block content %}
<section class="auth comment-answer">
{% if outcome == "pending" %}
  <h1>Thank you</h1>
  <p role="status">Your comment will appear once a moderator has read it.</p>
{% elif outcome == "closed" %}
  <h1>Comments are closed here</h1>
  <p>This page does not take comments.</p>
{% elif outcome == "too_many" %}
  <h1>One moment</h1>
  <p role="alert">Many comments came from your address just now. Please try again in {{ retry_after }} seconds.</p>
{% elif outcome == "failed" %}
  <h1>Not posted</h1>
  <p role="alert">Your comment could not be stored. It is below, so nothing is lost: please try again in a moment.</p>
{% else %}
  <h1>{% if outcome == "confirm" %}Post your comment{% else %}Please check your comment{% endif %}</h1>
  {% if outcome == "confirm" %}<p>Check your comment, then post it.</p>{% endif %}
  {% if problem %}<p class="error" role="alert" id="comment-problem">{{ problem }}</p>{% endif %}
{% endif %}
{% if outcome in ["confirm", "invalid", "failed", "too_many"] %}
  <form method="post" action="{{ url('comment_post') }}" class="auth-form">
    <input type="hidden" name="rsc" value="{{ typed.rsc }}">
    <input type="hidden" name="parent" value="{{ typed.parent }}">
    <input type="hidden" name="_ticket" value="{{ ticket or '' }}">
    {% if request.user_id %}{{ csrf_field() }}{% else %}
    <p><label for="c-name">Name</label> <input id="c-name" name="name" required maxlength="100" value="{{ typed.name }}" autocomplete="name"{% if field == "name" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}></p>
    <p><label for="c-email">E-mail address (never shown)</label> <input id="c-email" type="email" name="email" required maxlength="254" value="{{ typed.email }}" autocomplete="email"{% if field == "email" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}></p>
    <p><label for="c-url">Website (optional)</label> <input id="c-url" type="url" name="url" maxlength="500" value="{{ typed.url }}" autocomplete="url"{% if field == "url" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}></p>
    {% endif %}
    <p><label for="c-body">Comment</label> <textarea id="c-body" name="body" rows="6" required maxlength="5000"{% if field == "body" %} aria-invalid="true" aria-describedby="comment-problem"{% endif %}>{{ typed.body }}</textarea></p>
    <p><button type="submit">Post the comment</button></p>
  </form>
{% endif %}
{% if back %}<p><a href="{{ back }}">Back to the page</a></p>{% endif %}
</section>
{% endblock %}

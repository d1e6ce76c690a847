{% extends "base.tpl" %}
{% block title %}Contact &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>Contact</h1>
{% if request.method == "POST" and q.name %}
<p class="notice">Thank you, {{ q.name }}. We read every message.</p>
{% endif %}
<form method="post" action="{{ url('contact') }}" class="form">
  <label>Name <input name="name" required value="{{ q.name or '' }}"></label>
  <label>Message <textarea name="message" rows="5">{{ q.message or '' }}</textarea></label>
  <button class="button" type="submit">Send</button>
</form>
{% endblock %}

{% extends "auth_base.tpl" %}
{% block title %}Log off{% endblock %}
{% block content %}
<section class="auth">
<h1>Log off</h1>
{% if request.user_id %}
<form method="post" action="/logoff">
  {{ csrf_field() }}
  <p><button type="submit">Log off</button></p>
</form>
<p><a href="/logon/sessions">Your sessions</a></p>
{% else %}
<p>You are not logged on. <a href="/logon">Log on</a></p>
{% endif %}
</section>
{% endblock %}

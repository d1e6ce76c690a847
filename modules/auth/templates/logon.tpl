{% extends "auth_base.tpl" %}
{% block title %}Log on{% endblock %}
{% block content %}
<section class="auth">
<h1>Log on</h1>
{% if error %}<p class="error" role="alert" id="logon-error">{{ error }}</p>{% endif %}
{% if request.user_id %}<p>You are logged on. <a href="/logoff">Log off</a></p>{% endif %}
<form method="post" action="/logon" class="auth-form">
  {{ csrf_field() }}
  <input type="hidden" name="next" value="{{ next or q.next or '/' }}">
  <p><label for="username">Username</label>
     <input id="username" name="username" autocomplete="username" required value="{{ username or '' }}"></p>
  <p><label for="password">Password</label>
     <input id="password" name="password" type="password" autocomplete="current-password" required></p>
  {% if second_factor %}<p><label for="code">Code</label>
     <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus></p>{% endif %}
  <p><label><input type="checkbox" name="remember" value="1"> Keep me logged in</label></p>
  <p><button type="submit">Log on</button></p>
</form>
</section>
{% endblock %}

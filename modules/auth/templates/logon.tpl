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
  {% if ticket %}
  <input type="hidden" name="username" value="{{ username }}">
  <input type="hidden" name="ticket" value="{{ ticket }}">
  {% if remember %}<input type="hidden" name="remember" value="1">{% endif %}
  <p>Logging on as <strong>{{ username }}</strong>. <a href="/logon{% if next %}?next={{ next|urlencode }}{% endif %}">Not you?</a></p>
  <p><label for="code">Code</label>
     <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus aria-describedby="code-help">
     <small id="code-help">Six digits from your authenticator app, or one of your recovery codes.</small></p>
  <p><button type="submit">Log on</button></p>
  {% else %}
  <p><label for="username">Username</label>
     <input id="username" name="username" autocomplete="username" required value="{{ username or '' }}"></p>
  <p><label for="password">Password</label>
     <input id="password" name="password" type="password" autocomplete="current-password" required></p>
  {% if second_factor %}<p><label for="code">Code</label>
     <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus></p>{% endif %}
  <p><label><input type="checkbox" name="remember" value="1"> Keep me logged in</label></p>
  <p><button type="submit">Log on</button></p>
  <p><a href="/logon/reset">Forgot your password?</a></p>
  {% endif %}
</form>
</section>
{% endblock %}

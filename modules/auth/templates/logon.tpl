{% extends "auth_base.tpl" %}
{% block title %}{{ _("Log on") }}{% endblock %}
{% block content %}
<section class="auth">
<h1>{{ _("Log on") }}</h1>
{% if error %}<p class="error" role="alert" id="logon-error">{{ error }}</p>{% endif %}
{% if request.user_id %}<p>{{ _("You are logged on.") }} <a href="/logoff">{{ _("Log off") }}</a></p>{% endif %}
<form method="post" action="/logon" class="auth-form">
  {{ csrf_field() }}
  <input type="hidden" name="next" value="{{ next or q.next or '/' }}">
  {% if ticket %}
  <input type="hidden" name="username" value="{{ username }}">
  <input type="hidden" name="ticket" value="{{ ticket }}">
  {% if remember %}<input type="hidden" name="remember" value="1">{% endif %}
  <p>{{ _("Logging on as") }} <strong>{{ username }}</strong>. <a href="/logon{% if next %}?next={{ next|urlencode }}{% endif %}">{{ _("Not you?") }}</a></p>
  <p><label for="code">{{ _("Code") }}</label>
     <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus aria-describedby="code-help">
     <small id="code-help">{{ _("Six digits from your authenticator app, or one of your recovery codes.") }}</small></p>
  <p><button type="submit">{{ _("Log on") }}</button></p>
  {% else %}
  <p><label for="username">{{ _("Username") }}</label>
     <input id="username" name="username" autocomplete="username" required value="{{ username or '' }}"></p>
  <p><label for="password">{{ _("Password") }}</label>
     <input id="password" name="password" type="password" autocomplete="current-password" required></p>
  {% if second_factor %}<p><label for="code">{{ _("Code") }}</label>
     <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus></p>{% endif %}
  <p><label><input type="checkbox" name="remember" value="1"> {{ _("Keep me logged in") }}</label></p>
  <p><button type="submit">{{ _("Log on") }}</button></p>
  <p><a href="/logon/reset">{{ _("Forgot your password?") }}</a></p>
  {% endif %}
</form>
</section>
{% endblock %}

{% extends "auth_base.tpl" %}
{% block title %}{{ _("Choose a new password") }}{% endblock %}
{% block content %}
<section class="auth logon-reset">
<h1>{{ _("Choose a new password") }}</h1>
{% if done %}
<p class="notice" role="status">{{ _("The password of {name} was changed. You can log on with it now.", name=username) }}</p>
<p><a href="/logon">{{ _("Log on") }}</a></p>
{% elif problem %}
<p class="error" role="alert" data-problem="{{ problem }}">{{ message }}</p>
<p><a href="{{ url('logon_reset') }}">{{ _("Ask for a new link") }}</a></p>
{% else %}
{% if error %}<p class="error" role="alert">{{ error }}</p>{% endif %}
<form method="post" action="{{ request.path }}" class="auth-form">
  {{ csrf_field() }}
<label for="password">{{ _("New password (at least 8 characters)") }}</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required autofocus>
<label for="password_again">{{ _("The same again") }}</label>
<input id="password_again" name="password_again" type="password" autocomplete="new-password" minlength="8" required>
<button type="submit">{{ _("Set the password") }}</button>
</form>
{% endif %}
</section>
{% endblock %}

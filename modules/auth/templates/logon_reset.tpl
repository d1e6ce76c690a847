{% extends "auth_base.tpl" %}
{% block title %}{{ _("Forgot your password?") }}{% endblock %}
{% block content %}
<section class="auth logon-reset">
<h1>{{ _("Forgot your password?") }}</h1>
{% if sent %}
<p class="notice" role="status">{{ message }}</p>
<p>{{ _("The link works once and for a limited time. No mail? Check the spam folder, or") }}
<a href="{{ request.path }}">{{ _("ask again") }}</a>.</p>
{% else %}
<p>{{ _("Type your username or e-mail address, and we send a link to choose a new password to the address of the account.") }}</p>
<p class="hint">{{ _("An account without an e-mail address cannot get the link (a new site's first administrator has none until one is added under Your account): ask an administrator, or run bulwark user passwd on the server.") }}</p>
{% if error %}<p class="error" role="alert">{{ error }}</p>{% endif %}
<form method="post" action="{{ request.path }}" class="auth-form">
  {{ csrf_field() }}
<label for="account">{{ _("Username or e-mail address") }}</label>
<input id="account" name="account" autocomplete="username" required autofocus value="{{ q.account }}">
<button type="submit">{{ _("Send the link") }}</button>
</form>
{% endif %}
</section>
{% endblock %}

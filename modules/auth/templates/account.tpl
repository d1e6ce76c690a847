{% extends "auth_base.tpl" %}
{% block title %}{{ _("Your account") }}{% endblock %}
{% block content %}
<section class="auth wide account">
<h1>{{ _("Your account") }}</h1>
<p>{{ _("Logged on as") }} <strong>{{ username }}</strong>{% if email %} ({{ email }}){% endif %}.</p>
{% if message %}<p class="notice" role="status" id="account-message">{{ message }}</p>{% endif %}
{% if error %}<p class="error" role="alert" id="account-error">{{ error }}</p>{% endif %}

<h2 id="second-factor">{{ _("Second factor") }}</h2>
{% if new_codes %}
<div id="recovery-codes">
<p><strong>{{ _("Your recovery codes.") }}</strong> {{ _("Each one logs you on once instead of a code from the app, if you lose your phone. Keep them somewhere safe now (print them, or put them in a password manager): they are shown only this once.") }}</p>
<ol class="codes">
{% for c in new_codes %}<li><code>{{ c }}</code></li>{% endfor %}
</ol>
<p><a href="{{ request.path }}">{{ _("I have kept them") }}</a></p>
</div>
{% elif pending %}
<div id="enrolment">
<p>{{ _("Two steps, and your account asks for a code from an authenticator app (any app that makes six-digit codes: Aegis, Google Authenticator, 1Password...) every time you log on.") }}
{% if second_factor %}{{ _("Until you confirm, your current one stays in force.") }}{% endif %}</p>
<h3>1. {{ _("Add the account to the app") }}</h3>
<p>{{ _("Scan this code with the app:") }}</p>
<div class="qr" role="img" aria-label="{{ _("QR code of the secret for your authenticator app") }}">{{ pending.qr_svg }}</div>
<p>{{ _("Or type this secret into it:") }} <code id="totp-secret">{{ pending.secret }}</code></p>
<details><summary>{{ _("The whole address, for an app that takes it pasted") }}</summary><p><code id="totp-uri">{{ pending.uri }}</code></p></details>
<h3>2. {{ _("Type the code the app shows") }}</h3>
<form method="post" action="{{ request.path }}" class="auth-form" id="confirm-form">
  {{ csrf_field() }}
  <input type="hidden" name="step" value="confirm">
  <label for="code">{{ _("Code from the app") }}</label>
  <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9 ]*" required aria-describedby="code-help">
  <small id="code-help">{{ _("Six digits; a new one every 30 seconds.") }}</small>
  <p><button type="submit">{{ _("Confirm") }}</button></p>
</form>
</div>
{% elif second_factor %}
<p id="second-factor-state">{{ _("On: every logon asks for a code from your authenticator app.") }}
{{ _("You have") }} <strong>{{ recovery_codes_left }}</strong> {{ _n("unused recovery code.", "unused recovery codes.", recovery_codes_left) }}</p>
{% else %}
<p id="second-factor-state">{{ _("Off: your password alone logs you on. A second factor, a code from an app on your phone, keeps your account safe even if someone learns your password.") }}</p>
{% endif %}

{% if not new_codes %}
<form method="post" action="{{ request.path }}" class="auth-form" id="start-form">
  {{ csrf_field() }}
  <input type="hidden" name="step" value="start">
  <label for="start-password">{{ _("Your password") }}</label>
  <input id="start-password" name="password" type="password" autocomplete="current-password" required>
  <p><button type="submit">{% if pending %}{{ _("Start over with a new secret") }}{% elif second_factor %}{{ _("Move to a new app or phone") }}{% else %}{{ _("Set up a second factor") }}{% endif %}</button></p>
</form>
{% if second_factor and not pending %}
<h3>{{ _("Recovery codes and turning it off") }}</h3>
<form method="post" action="{{ request.path }}" class="auth-form" id="manage-form">
  {{ csrf_field() }}
  <label for="manage-password">{{ _("Your password") }}</label>
  <input id="manage-password" name="password" type="password" autocomplete="current-password" required>
  <p class="actions">
    <button type="submit" name="step" value="recovery" class="secondary">{{ _("Make new recovery codes") }}</button>
    <button type="submit" name="step" value="disable" class="danger">{{ _("Turn the second factor off") }}</button>
  </p>
</form>
{% endif %}
{% endif %}

{% if site_activity_mail is not none %}
<h2 id="site-mail">{{ _("Mail about the whole site") }}</h2>
<form method="post" action="{{ request.path }}" class="auth-form" id="mail-form">
  {{ csrf_field() }}
  <input type="hidden" name="step" value="mail">
  <p><label><input type="checkbox" name="site_activity" value="on"{% if site_activity_mail %} checked{% endif %}> {{ _("Mail me about every new comment and form answer on the site") }}</label></p>
  <p><small>{{ _("Comments on pages you wrote are mailed to you either way.") }}</small></p>
  <p><button type="submit">{{ _("Save") }}</button></p>
</form>
{% endif %}

<h2>{{ _("Password and sessions") }}</h2>
<ul>
  <li><a href="{{ url('logon_reset') }}">{{ _("Change your password") }}</a> {{ _("(by a link sent to your e-mail address)") }}</li>
  <li><a href="{{ url('sessions') }}">{{ _("Where you are logged on") }}</a></li>
  <li><a href="/logoff">{{ _("Log off") }}</a></li>
</ul>
</section>
{% endblock %}

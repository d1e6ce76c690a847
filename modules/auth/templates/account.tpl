{% extends "auth_base.tpl" %}
{% block title %}Your account{% endblock %}
{% block content %}
<section class="auth wide account">
<h1>Your account</h1>
<p>Logged on as <strong>{{ username }}</strong>{% if email %} ({{ email }}){% endif %}.</p>
{% if message %}<p class="notice" role="status" id="account-message">{{ message }}</p>{% endif %}
{% if error %}<p class="error" role="alert" id="account-error">{{ error }}</p>{% endif %}

<h2 id="second-factor">Second factor</h2>
{% if new_codes %}
<div id="recovery-codes">
<p><strong>Your recovery codes.</strong> Each one logs you on once instead of a code from the
app, if you lose your phone. Keep them somewhere safe now (print them, or put them in a
password manager): they are shown only this once.</p>
<ol class="codes">
{% for c in new_codes %}<li><code>{{ c }}</code></li>{% endfor %}
</ol>
<p><a href="{{ request.path }}">I have kept them</a></p>
</div>
{% elif pending %}
<div id="enrolment">
<p>Two steps, and your account asks for a code from an authenticator app (any app that
makes six-digit codes: Aegis, Google Authenticator, 1Password...) every time you log on.
{% if second_factor %}Until you confirm, your current one stays in force.{% endif %}</p>
<h3>1. Add the account to the app</h3>
<p>Scan this code with the app:</p>
<div class="qr" role="img" aria-label="QR code of the secret for your authenticator app">{{ pending.qr_svg }}</div>
<p>Or type this secret into it: <code id="totp-secret">{{ pending.secret }}</code></p>
<details><summary>The whole address, for an app that takes it pasted</summary><p><code id="totp-uri">{{ pending.uri }}</code></p></details>
<h3>2. Type the code the app shows</h3>
<form method="post" action="{{ request.path }}" class="auth-form" id="confirm-form">
  {{ csrf_field() }}
  <input type="hidden" name="step" value="confirm">
  <label for="code">Code from the app</label>
  <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9 ]*" required aria-describedby="code-help">
  <small id="code-help">Six digits; a new one every 30 seconds.</small>
  <p><button type="submit">Confirm</button></p>
</form>
</div>
{% elif second_factor %}
<p id="second-factor-state">On: every logon asks for a code from your authenticator app.
You have <strong>{{ recovery_codes_left }}</strong> unused recovery code{% if recovery_codes_left != 1 %}s{% endif %}.</p>
{% else %}
<p id="second-factor-state">Off: your password alone logs you on. A second factor, a code from an
app on your phone, keeps your account safe even if someone learns your password.</p>
{% endif %}

{% if not new_codes %}
<form method="post" action="{{ request.path }}" class="auth-form" id="start-form">
  {{ csrf_field() }}
  <input type="hidden" name="step" value="start">
  <label for="start-password">Your password</label>
  <input id="start-password" name="password" type="password" autocomplete="current-password" required>
  <p><button type="submit">{% if pending %}Start over with a new secret{% elif second_factor %}Move to a new app or phone{% else %}Set up a second factor{% endif %}</button></p>
</form>
{% if second_factor and not pending %}
<h3>Recovery codes and turning it off</h3>
<form method="post" action="{{ request.path }}" class="auth-form" id="manage-form">
  {{ csrf_field() }}
  <label for="manage-password">Your password</label>
  <input id="manage-password" name="password" type="password" autocomplete="current-password" required>
  <p class="actions">
    <button type="submit" name="step" value="recovery" class="secondary">Make new recovery codes</button>
    <button type="submit" name="step" value="disable" class="danger">Turn the second factor off</button>
  </p>
</form>
{% endif %}
{% endif %}

<h2>Password and sessions</h2>
<ul>
  <li><a href="{{ url('logon_reset') }}">Change your password</a> (by a link sent to your e-mail address)</li>
  <li><a href="{{ url('sessions') }}">Where you are logged on</a></li>
  <li><a href="/logoff">Log off</a></li>
</ul>
</section>
{% endblock %}

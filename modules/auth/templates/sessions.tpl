{% extends "auth_base.tpl" %}
{% block title %}Your sessions{% endblock %}
{% block content %}
<section class="auth wide">
<h1>Your sessions</h1>
<table class="sessions">
<thead><tr><th scope="col">Since</th><th scope="col">Last seen</th><th scope="col">Browser</th><th scope="col">Address</th><th scope="col"><span class="visually-hidden">End it</span></th></tr></thead>
<tbody>
{% for s in sessions %}
<tr>
  <td data-label="Since"><time datetime="{{ s.created }}">{{ s.created|date("%-d %b %Y, %H:%M UTC") }}</time></td><td data-label="Last seen"><time datetime="{{ s.last_seen }}">{{ s.last_seen|date("%-d %b %Y, %H:%M UTC") }}</time></td><td data-label="Browser">{{ s.user_agent or "" }}</td><td data-label="Address">{{ s.address or "" }}</td>
  <td>{% if s.current %}this one{% else %}
    <form method="post" action="/logon/sessions">{{ csrf_field() }}<input type="hidden" name="end" value="{{ s.id }}"><button type="submit">End</button></form>
  {% endif %}</td>
</tr>
{% endfor %}
</tbody>
</table>
<div class="actions">
<form method="post" action="/logon/sessions">{{ csrf_field() }}<input type="hidden" name="end" value="others"><button type="submit" class="secondary">End all other sessions</button></form>
<form method="post" action="/logoff">{{ csrf_field() }}<button type="submit">Log off</button></form>
</div>
<p><a href="{{ url('account') }}">Your account</a></p>
</section>
{% endblock %}

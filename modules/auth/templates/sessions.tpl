{% extends "auth_base.tpl" %}
{% block title %}Your sessions{% endblock %}
{% block content %}
<section class="auth">
<h1>Your sessions</h1>
<table class="sessions">
<thead><tr><th scope="col">Since</th><th scope="col">Last seen</th><th scope="col">Browser</th><th scope="col">Address</th><th scope="col"></th></tr></thead>
<tbody>
{% for s in sessions %}
<tr>
  <td>{{ s.created }}</td><td>{{ s.last_seen }}</td><td>{{ s.user_agent or "" }}</td><td>{{ s.address or "" }}</td>
  <td>{% if s.current %}this one{% else %}
    <form method="post" action="/logon/sessions">{{ csrf_field() }}<input type="hidden" name="end" value="{{ s.id }}"><button type="submit">End</button></form>
  {% endif %}</td>
</tr>
{% endfor %}
</tbody>
</table>
<form method="post" action="/logon/sessions">{{ csrf_field() }}<input type="hidden" name="end" value="others"><button type="submit">End all other sessions</button></form>
<form method="post" action="/logoff">{{ csrf_field() }}<button type="submit">Log off</button></form>
</section>
{% endblock %}

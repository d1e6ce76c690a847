{% extends "auth_base.tpl" %}
{% block title %}{{ _("Your sessions") }}{% endblock %}
{% block content %}
<section class="auth wide">
<h1>{{ _("Your sessions") }}</h1>
<table class="sessions">
<thead><tr><th scope="col">{{ _("Since") }}</th><th scope="col">{{ _("Last seen") }}</th><th scope="col">{{ _("Browser") }}</th><th scope="col">{{ _("Address") }}</th><th scope="col"><span class="visually-hidden">{{ _("End it") }}</span></th></tr></thead>
<tbody>
{% for s in sessions %}
<tr>
  <td data-label="{{ _("Since") }}"><time datetime="{{ s.created }}">{{ s.created|date("%-d %b %Y, %H:%M UTC") }}</time></td><td data-label="{{ _("Last seen") }}"><time datetime="{{ s.last_seen }}">{{ s.last_seen|date("%-d %b %Y, %H:%M UTC") }}</time></td><td data-label="{{ _("Browser") }}">{{ s.user_agent or "" }}</td><td data-label="{{ _("Address") }}">{{ s.address or "" }}</td>
  <td>{% if s.current %}{{ _("this one") }}{% else %}
    <form method="post" action="/logon/sessions">{{ csrf_field() }}<input type="hidden" name="end" value="{{ s.id }}"><button type="submit">{{ _("End") }}</button></form>
  {% endif %}</td>
</tr>
{% endfor %}
</tbody>
</table>
<div class="actions">
<form method="post" action="/logon/sessions">{{ csrf_field() }}<input type="hidden" name="end" value="others"><button type="submit" class="secondary">{{ _("End all other sessions") }}</button></form>
<form method="post" action="/logoff">{{ csrf_field() }}<button type="submit">{{ _("Log off") }}</button></form>
</div>
<p><a href="{{ url('account') }}">{{ _("Your account") }}</a></p>
</section>
{% endblock %}

{% extends "auth_base.tpl" %}
{% block title %}{{ _("Log off") }}{% endblock %}
{% block content %}
<section class="auth">
<h1>{{ _("Log off") }}</h1>
{% if request.user_id %}
<form method="post" action="/logoff">
  {{ csrf_field() }}
  <p><button type="submit">{{ _("Log off") }}</button></p>
</form>
<p><a href="/logon/sessions">{{ _("Your sessions") }}</a></p>
{% else %}
<p>{{ _("You are not logged on.") }} <a href="/logon">{{ _("Log on") }}</a></p>
{% endif %}
</section>
{% endblock %}

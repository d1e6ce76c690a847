{% extends "base.tpl" %}
{% block title %}{{ _("Contact") }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("Contact") }}</h1>
<p>{{ _("Write to us: every message reaches a person.") }}</p>
{# The contact form, built in the admin (Forms): see docs/forms.md. #}
{% if m.forms is defined %}{% set form = m.forms("contact") %}{% include "_form.tpl" %}{% endif %}
{% endblock %}

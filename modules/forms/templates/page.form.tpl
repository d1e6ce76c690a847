{# A form's own page (/page/{id} of a resource of the category "form"). #}
{% extends "auth_base.tpl" %}
{% block title %}{{ rsc.title }}{% endblock %}
{% block content %}
<section class="auth">
<h1>{{ rsc.title }}</h1>
{% if rsc.summary %}<p>{{ rsc.summary }}</p>{% endif %}
{% set form = m.forms(rsc.id) %}
{% include "_form.tpl" %}
</section>
{% endblock %}

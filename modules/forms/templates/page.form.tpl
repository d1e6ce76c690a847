{# A form's own page (/page/{id} of a resource of the category "form").
   A form without fields is not there for visitors yet (404); its editors
   see what is missing. #}
{% extends "auth_base.tpl" %}
{% block title %}{{ rsc.title }}{% endblock %}
{% block content %}
<section class="auth">
<h1>{{ rsc.title }}</h1>
{% if rsc.summary %}<p>{{ rsc.summary }}</p>{% endif %}
{% set form = m.forms(rsc.id) %}
{% if form and not form.error and not form.fields %}
  {% if m.acl.may("update", rsc.id) %}<p class="notice" role="status">{{ _("This form has no fields yet: visitors are told it is not here until it has one.") }} <a href="/admin/edit/{{ rsc.id }}">{{ _("Add fields") }}</a></p>
  {% else %}{{ not_found() }}{% endif %}
{% endif %}
{% include "_form.tpl" %}
</section>
{% endblock %}

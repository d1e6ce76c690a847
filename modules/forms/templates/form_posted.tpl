{# The answer to a form's POST (the forms module): `outcome` is thanks (the
   form's `thanks` text), invalid (the form again, `errors` by field, with
   what was typed in `values`) or confirm (no ticket: a browser without
   script; the answers back with a ticket, to send again). A file must be
   chosen again. In the site's own frame through auth_base.tpl. #}
{% extends "auth_base.tpl" %}
{% block title %}{{ m.rsc[form_id].title }}{% endblock %}
{% block content %}
{% set rsc = m.rsc[form_id] %}
{% set form = m.forms(form_id) %}
<section class="auth form-answer">
<h1>{{ rsc.title }}</h1>
{% if outcome == "thanks" %}
  {# The form's own text (braces doubled so that _() shows them as they
     are), or the default. #}
  <p role="status" class="notice">{{ _(rsc.thanks|replace("{", "{{")|replace("}", "}}")) if rsc.thanks else _("Thank you: we received your answers.") }}</p>
{% else %}
  {% if outcome == "confirm" %}<p>{{ _("Please check your answers, then send them.") }}</p>{% endif %}
  {% include "_form.tpl" %}
{% endif %}
</section>
{% endblock %}

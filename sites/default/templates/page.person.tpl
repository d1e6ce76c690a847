{% extends "page.tpl" %}
{# A person's page: who they are, then what they wrote, newest first. #}
{% block listing %}
{% from "_macros.tpl" import listing %}
{% set found = m.search(hasobject=[rsc.id, "author"], exclude="meta", sort="-created", page=q.page, pagelen=10, total=true) %}
{% if found.total %}
<h2>{{ _("Written by {name}", name=rsc.title) }}</h2>
{{ listing(found, rsc.page_url, "") }}
{% endif %}
{% endblock %}

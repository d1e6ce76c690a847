{% extends "page.tpl" %}
{# A keyword's page (a category or a tag of an imported blog): its text,
   then what is about it, newest first. #}
{% block listing %}
{% from "_macros.tpl" import listing %}
{% set found = m.search(hasobject=[rsc.id, "subject"], exclude="meta", sort="-created", page=q.page, pagelen=10, total=true) %}
<h2>{{ _("About {title}", title=rsc.title) }}</h2>
{{ listing(found, rsc.page_url, _("Nothing here yet.")) }}
{% endblock %}

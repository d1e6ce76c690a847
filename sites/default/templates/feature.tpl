{% extends "base.tpl" %}
{% from "features_list.tpl" import features %}
{% block title %}{{ _(found.title) if found else _("Feature") }} &middot; {{ super() }}{% endblock %}
{% block content %}
{% set found = features | selectattr("slug", "eq", slug) | first %}
{# A name the list does not have is not a page: 404, with the site's 404.tpl. #}
{% if not found %}{{ not_found() }}{% endif %}
<h1>{{ _(found.title) }}</h1>
<p class="lead">{{ _(found.text) }}</p>
<p><a href="{{ url('features') }}">{{ _("All features") }}</a></p>
{% endblock %}

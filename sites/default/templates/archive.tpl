{% extends "base.tpl" %}
{% from "_macros.tpl" import listing %}
{# The articles of a year or a month (`/archive/2024`, `/archive/2024/03`). #}
{% set months = [_("January"), _("February"), _("March"), _("April"), _("May"), _("June"), _("July"), _("August"), _("September"), _("October"), _("November"), _("December")] %}
{% if year is not digits or (month is defined and month is not digits) %}{{ not_found() }}{% endif %}
{% set number = month|int if month is defined else 0 %}
{% if (year|int) < 1 or (year|int) > 9999 or (month is defined and (number < 1 or number > 12)) %}{{ not_found() }}{% endif %}
{% set when = (months[number - 1] ~ " " ~ year|int) if month is defined else year|int|string %}
{% block title %}{{ _("Articles from {when}", when=when) }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("Articles from {when}", when=when) }}</h1>
{% if month is defined %}
{% set found = m.search(cat="article", year=year, month=month, sort="-created", page=q.page, pagelen=10, total=true) %}
{{ listing(found, url('archive_month', year=year, month=month), _("Nothing was written then.")) }}
{% else %}
{% set found = m.search(cat="article", year=year, sort="-created", page=q.page, pagelen=10, total=true) %}
{{ listing(found, url('archive_year', year=year), _("Nothing was written then.")) }}
{% endif %}
{% endblock %}

{% extends "base.tpl" %}
{% from "_macros.tpl" import resource_card %}
{% block title %}{% if q.q %}{{ _("“{text}”", text=q.q) }} &middot; {% endif %}{{ _("Search") }} &middot; {{ super() }}{% endblock %}
{% block head %}<meta name="robots" content="noindex, follow">{% endblock %}
{% block content %}
<h1>{{ _("Search") }}</h1>
<form class="form inline" role="search" action="{{ url('search') }}">
  <input name="q" type="search" value="{{ q.q or '' }}" aria-label="{{ _("Words to find") }}" placeholder="{{ _("Words to find") }}">
  <button class="button" type="submit">{{ _("Search") }}</button>
</form>
{% if q.q %}
{% set found = m.search(cat="text", text=q.q, page=q.page, pagelen=10, total=true) %}
<p role="status">{{ _n("{n} page found for “{text}”.", "{n} pages found for “{text}”.", found.total, text=q.q) }}</p>
<section class="grid">
{% for r in found.items %}
  {{ resource_card(r, 2) }}
{% endfor %}
</section>
{% if found.pages > 1 %}
<nav class="pager" aria-label="{{ _("Pages of results") }}">
{% for p in range(1, found.pages + 1) %}
  <a href="{{ url('search', q=q.q, page=p) }}"{% if p == found.page %} aria-current="page"{% endif %}>{{ p }}</a>
{% endfor %}
</nav>
{% endif %}
{% endif %}
{% endblock %}

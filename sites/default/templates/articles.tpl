{% extends "base.tpl" %}
{% from "_macros.tpl" import card, resource_card %}
{% block title %}{{ _("Articles") }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("Articles") }}</h1>
<form class="form inline" action="{{ url('articles') }}">
  <input name="text" value="{{ q.text or '' }}" placeholder="{{ _("Search articles") }}" aria-label="{{ _("Search articles") }}">
  <button class="button" type="submit">{{ _("Search") }}</button>
</form>
{% set found = m.search(cat="article", text=q.text, page=q.page, pagelen=10, total=true) %}
<section class="grid">
{% for a in found.items %}
  {{ resource_card(a, 2) }}
{% else %}
  <p>{% if q.text %}{{ _("Nothing found for “{text}”.", text=q.text) }}{% else %}{{ _("Nothing found.") }}{% endif %}</p>
{% endfor %}
</section>
{% if found.pages > 1 %}
<nav class="pager">
{% for p in range(1, found.pages + 1) %}
  <a href="{{ url('articles', text=q.text or '', page=p) }}"{% if p == found.page %} aria-current="page"{% endif %}>{{ p }}</a>
{% endfor %}
</nav>
{% endif %}
{% endblock %}

{% extends "base.tpl" %}
{% from "_macros.tpl" import card, resource_card %}
{% block title %}Articles &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>Articles</h1>
<form class="form inline" action="{{ url('articles') }}">
  <input name="text" value="{{ q.text or '' }}" placeholder="Search articles">
  <button class="button" type="submit">Search</button>
</form>
{% set found = m.search(cat="article", text=q.text, page=q.page, pagelen=10, total=true) %}
<section class="grid">
{% for a in found.items %}
  {{ resource_card(a) }}
{% else %}
  <p>Nothing found{% if q.text %} for “{{ q.text }}”{% endif %}.</p>
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

{% extends "base.tpl" %}
{% from "_macros.tpl" import listing %}
{% set cat = m.category[name] %}
{% block title %}{{ cat.title }} &middot; {{ super() }}{% endblock %}
{% block content %}
{% if not cat %}{{ not_found() }}{% endif %}
<nav class="crumbs">
{% for c in cat.path %}<a href="{{ url('category', name=c.name) }}"{% if loop.last %} aria-current="page"{% endif %}>{{ c.title }}</a>{% if not loop.last %} &rsaquo; {% endif %}{% endfor %}
</nav>
<h1>{{ cat.title }}</h1>
{% if cat.children %}
<p class="hint">{{ _("Also in here:") }}
{% for c in cat.children %}<a href="{{ url('category', name=c.name) }}">{{ c.title }}</a>{% if not loop.last %}, {% endif %}{% endfor %}
</p>
{% endif %}
{% set found = m.search(cat=name, sort="-created", page=q.page, pagelen=10, total=true) %}
{{ listing(found, url('category', name=name), _("Nothing here yet.")) }}
{% endblock %}

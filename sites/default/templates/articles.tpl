{% extends "base.tpl" %}
{% from "_macros.tpl" import listing %}
{% block title %}{{ _("Articles") }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("Articles") }}</h1>
<form class="form inline" action="{{ url('articles') }}">
  <input name="text" value="{{ q.text or '' }}" placeholder="{{ _("Search articles") }}" aria-label="{{ _("Search articles") }}">
  <button class="button" type="submit">{{ _("Search") }}</button>
</form>
{% set found = m.search(cat="article", text=q.text, page=q.page, pagelen=10, total=true) %}
{{ listing(found, url('articles', text=q.text or ''), _("Nothing found for “{text}”.", text=q.text) if q.text else _("Nothing found.")) }}
{% endblock %}

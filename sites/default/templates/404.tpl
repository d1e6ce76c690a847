{# The site's page for what is not here: its header, navigation and search,
   in the visitor's language (rendered as any page, never cached). #}
{% extends "base.tpl" %}
{% block title %}{{ _("Not found") }} &middot; {{ super() }}{% endblock %}
{% block canonical %}{% endblock %}
{% block alternates %}{% endblock %}
{% block head %}<meta name="robots" content="noindex">{% endblock %}
{% block content %}
<h1>{{ _("Not found") }}</h1>
<p>{{ why or _("The page you asked for is not here. It may have moved: search for it, or start from the front page.") }}</p>
<form class="form inline" role="search" action="{{ url('search') }}">
  <input name="q" type="search" aria-label="{{ _("Words to find") }}" placeholder="{{ _("Words to find") }}">
  <button class="button" type="submit">{{ _("Search") }}</button>
</form>
<p><a href="{{ url('home') }}">{{ _("To the front page") }}</a></p>
{% endblock %}

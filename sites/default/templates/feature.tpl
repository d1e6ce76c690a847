{% extends "base.tpl" %}
{% from "features_list.tpl" import features %}
{% block title %}Feature &middot; {{ super() }}{% endblock %}
{% block content %}
{% set found = features | selectattr("slug", "eq", slug) | first %}
{% if found %}
<h1>{{ found.title }}</h1>
<p class="lead">{{ found.text }}</p>
{% else %}
<h1>No feature called “{{ slug }}”</h1>
{% endif %}
<p><a href="{{ url('features') }}">All features</a></p>
{% endblock %}

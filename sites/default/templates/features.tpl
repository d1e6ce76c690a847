{% extends "base.tpl" %}
{% from "_macros.tpl" import card %}
{% from "features_list.tpl" import features %}
{% block title %}Features &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>Features</h1>
<section class="grid">
{% for f in features %}
  {{ card(f.title, f.text, url("feature", f.slug)) }}
{% endfor %}
</section>
{% endblock %}

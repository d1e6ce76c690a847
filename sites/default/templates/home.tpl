{% extends "base.tpl" %}
{% from "_macros.tpl" import card, resource_card %}
{% from "features_list.tpl" import features %}
{% block content %}
<section class="hero">
  <h1>{{ site.settings.title }}</h1>
  <p class="lead">{{ site.settings.tagline }}</p>
  <p><a class="button" href="{{ url('features') }}">See what it does</a></p>
</section>
<section class="grid">
{% for f in features[:3] %}
  {{ card(f.title, f.text, url("feature", f.slug)) }}
{% endfor %}
</section>
<h2>Latest articles</h2>
<section class="grid">
{% for a in m.search(cat="article", pagelen=3) %}
  {{ resource_card(a) }}
{% else %}
  <p>No articles yet.</p>
{% endfor %}
</section>
<p class="hint">This is the starter site. Its files are in <code>sites/default/</code>: edit
<code>templates/home.tpl</code> with <code>bulwark serve --dev</code> running and reload.</p>
{% endblock %}

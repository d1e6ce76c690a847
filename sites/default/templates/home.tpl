{% extends "base.tpl" %}
{% from "_macros.tpl" import card, resource_card %}
{% from "features_list.tpl" import features %}
{% block head %}
{% set description = _(site.settings.tagline) %}
<meta name="description" content="{{ description }}">
<meta property="og:type" content="website">
<meta property="og:title" content="{{ site.settings.title }}">
<meta property="og:description" content="{{ description }}">
{% if canonical_url is defined %}<meta property="og:url" content="{{ canonical_url() }}">{% endif %}
<meta property="og:site_name" content="{{ site.settings.title }}">
{% endblock %}
{% block content %}
<section class="hero">
  <h1>{{ site.settings.title }}</h1>
  <p class="lead">{{ _(site.settings.tagline) }}</p>
  <p><a class="button" href="{{ url('features') }}">{{ _("See what it does") }}</a></p>
</section>
<section class="grid">
{% for f in features[:3] %}
  {{ card(_(f.title), _(f.text), url("feature", f.slug), 2) }}
{% endfor %}
</section>
<h2>{{ _("Latest articles") }}</h2>
<section class="grid">
{% for a in m.search(cat="article", pagelen=3) %}
  {{ resource_card(a) }}
{% else %}
  <p>{{ _("No articles yet.") }}</p>
{% endfor %}
</section>
<p class="hint">{{ _("This is the starter site. Its files are in sites/default/: edit templates/home.tpl with bulwark serve --dev running and reload; its texts in other languages are in translations/.") }}</p>
{% endblock %}

{% extends "base.tpl" %}
{% block title %}{{ rsc.title }} &middot; {{ super() }}{% endblock %}
{% block canonical %}{{ canonical_link(path=rsc.page_url) }}{% endblock %}
{% block head %}
{% if not rsc.is_live %}<meta name="robots" content="noindex">{% endif %}
{% if rsc.summary %}<meta name="description" content="{{ rsc.summary }}">{% endif %}
<meta property="og:type" content="article">
<meta property="og:title" content="{{ rsc.title }}">
{% if rsc.summary %}<meta property="og:description" content="{{ rsc.summary }}">{% endif %}
<meta property="og:site_name" content="{{ site.settings.title }}">
{% if canonical_url is defined %}<meta property="og:url" content="{{ canonical_url(path=rsc.page_url) }}">
{% if image_url is defined %}{% for pic in rsc.o.depiction %}{% if loop.first %}{% set picture = image_url(pic.id, "large") %}{% if picture %}<meta property="og:image" content="{{ canonical_url(path=picture) }}">
<meta property="og:image:alt" content="{{ pic.alt or pic.title }}">{% endif %}{% endif %}{% endfor %}{% endif %}{% endif %}
{% endblock %}
{% block content %}
<article class="page">
{% call live("rsc/" ~ rsc.id) %}
  <p class="hint"><a href="{{ url('category', name=rsc.category) }}">{{ m.category[rsc.category].title }}</a>{% for p in rsc.o.author %}{% if loop.first %} {{ _("by") }} {% endif %}<a href="{{ p.page_url }}">{{ p.title }}</a>{% if not loop.last %}, {% endif %}{% endfor %}</p>
  <h1>{{ rsc.title }}</h1>
  {% if rsc.summary %}<p class="lead">{{ rsc.summary }}</p>{% endif %}
  {% if image is defined %}{% if (rsc.mime or "")[:6] == "image/" %}{# A picture's own page shows it. #}<figure class="depiction">{{ image(rsc.id, "large") }}</figure>
  {% else %}{% for pic in rsc.o.depiction %}{% if loop.first %}<figure class="depiction">{{ image(pic.id, "medium") }}</figure>{% endif %}{% endfor %}{% endif %}{% endif %}
  {{ embeds(pictures(rsc.body)) if pictures is defined else rsc.body }}
  {% set related = rsc.o.relation %}
  {% if related %}
  <h2>{{ _("Related") }}</h2>
  <ul>{% for r in related %}<li><a href="{{ r.page_url }}">{{ r.title }}</a></li>{% endfor %}</ul>
  {% endif %}
{% endcall %}
{% block listing %}{% endblock %}
</article>
{% if m.comments is defined and m.comments.open(rsc.id) %}{% include "_comments.tpl" %}{% endif %}
{{ lib("js/bulwark.js", "js/bulwark-live.js") }}
{% endblock %}

{#- Feed autodiscovery for a page's <head>: the site's feeds, and on a
    keyword's, a person's or a category's page, that one's. -#}
<link rel="alternate" type="application/atom+xml" title="{{ site.settings.title|plain }}" href="{{ url('feed') }}">
<link rel="alternate" type="application/rss+xml" title="{{ site.settings.title|plain }} (RSS)" href="{{ url('feed_rss') }}">
{%- if rsc is defined and rsc and (rsc.is_a("keyword") or rsc.is_a("person") or rsc.is_a("category")) %}
<link rel="alternate" type="application/atom+xml" title="{{ site.settings.title|plain }}: {{ rsc.title|plain }}" href="{{ url('feed_about', id=rsc.id) }}">
{%- endif %}

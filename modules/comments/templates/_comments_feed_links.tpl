{#- Comment feed autodiscovery for a page's <head>: on a page that takes
    comments, the feed of its comments. -#}
{%- if rsc is defined and rsc and m.comments.open(rsc.id) %}
<link rel="alternate" type="application/atom+xml" title="{{ _("Comments on {title}", title=rsc.title|plain) }}" href="{{ url('comments_feed_about', id=rsc.id) }}">
{%- endif %}

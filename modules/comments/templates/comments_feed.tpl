<?xml version="1.0" encoding="utf-8"?>
{#- The newest approved comments as Atom or RSS 2.0 (`format`): the site's,
    or those on one page (`id`), newest first, in the language of the URL.
    A comment's text goes out as escaped HTML (its paragraphs), names as
    text; a page the visitor may not see has no feed. -#}
{%- set about = m.rsc[id] if id is defined else none %}
{%- if id is defined and not (about and m.comments.open(about.id)) %}{{ not_found() }}{% endif %}
{%- set found = (m.comments(about.id)|sort(attribute="id", reverse=true))[:20] if about else m.comments.latest(20) %}
{%- set title = _("Comments on {title}", title=about.title|plain) if about else _("Comments on {title}", title=site.settings.title|plain) %}
{%- set home = canonical_url(path=about.page_url if about else request.prefix ~ "/") %}
{%- set updated = (found|map(attribute="created")|max) or "1970-01-01T00:00:00Z" %}
{%- if format == "rss" %}
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
<title>{{ title }}</title>
<link>{{ home }}</link>
<description>{{ title }}</description>
<language>{{ request.language }}</language>
<atom:link href="{{ canonical_url() }}" rel="self" type="application/rss+xml"/>
<lastBuildDate>{{ updated|date("%a, %d %b %Y %H:%M:%S +0000") }}</lastBuildDate>
<generator>Bulwark</generator>
{%- for c in found %}
{%- set page = about or m.rsc[c.rsc] %}
<item>
<title>{{ _("{name} on {title}", name=c.name, title=page.title|plain) }}</title>
<link>{{ canonical_url(path=page.page_url) }}#comment-{{ c.id }}</link>
<guid isPermaLink="false">{{ canonical_url(path="/page/" ~ c.rsc) }}#comment-{{ c.id }}</guid>
<pubDate>{{ c.created|date("%a, %d %b %Y %H:%M:%S +0000") }}</pubDate>
<dc:creator>{{ c.name }}</dc:creator>
<description>{{ c.body|source }}</description>
</item>
{%- endfor %}
</channel>
</rss>
{%- else %}
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="{{ request.language }}">
<title type="text">{{ title }}</title>
<link rel="self" type="application/atom+xml" href="{{ canonical_url() }}"/>
<link rel="alternate" type="text/html" href="{{ home }}"/>
<id>{{ canonical_url() }}</id>
<updated>{{ updated|date("%Y-%m-%dT%H:%M:%SZ") }}</updated>
<author><name>{{ site.settings.title|plain }}</name></author>
<generator>Bulwark</generator>
{%- for c in found %}
{%- set page = about or m.rsc[c.rsc] %}
<entry>
<title type="text">{{ _("{name} on {title}", name=c.name, title=page.title|plain) }}</title>
<link rel="alternate" type="text/html" href="{{ canonical_url(path=page.page_url) }}#comment-{{ c.id }}"/>
<id>{{ canonical_url(path="/page/" ~ c.rsc) }}#comment-{{ c.id }}</id>
<published>{{ c.created|date("%Y-%m-%dT%H:%M:%SZ") }}</published>
<updated>{{ c.created|date("%Y-%m-%dT%H:%M:%SZ") }}</updated>
<author><name>{{ c.name }}</name>{% if c.url %}<uri>{{ c.url }}</uri>{% endif %}</author>
<content type="html">{{ c.body|source }}</content>
</entry>
{%- endfor %}
</feed>
{%- endif %}

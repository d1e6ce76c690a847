<?xml version="1.0" encoding="utf-8"?>
{#- The newest published articles, as Atom or RSS 2.0 (`format`), of the
    site or about one thing (`id`: a keyword's, a person's, a category's),
    in the language of the URL. A site changes what is listed by overriding
    this template, or `cat` by the rule's `vars`. Text goes out as text
    (`plain`) and bodies as escaped HTML with their links on the site's host
    (`absolute_links`): a stored value may hold entities XML does not know. -#}
{%- set listed = cat if cat is defined else "article" %}
{%- set about = m.rsc[id] if id is defined else none %}
{%- if id is defined and not about %}{{ not_found() }}{% endif %}
{%- if not about %}{% set found = m.search(cat=listed, status="published", sort="-created", pagelen=20) %}
{%- elif about.is_a("keyword") %}{% set found = m.search(cat=listed, status="published", sort="-created", pagelen=20, hasobject=[about.id, "subject"]) %}
{%- elif about.is_a("person") %}{% set found = m.search(cat=listed, status="published", sort="-created", pagelen=20, hasobject=[about.id, "author"]) %}
{%- elif about.is_a("category") %}{% set found = m.search(cat=about.name, status="published", sort="-created", pagelen=20) %}
{%- else %}{{ not_found() }}{% endif %}
{%- set title = site.settings.title ~ (": " ~ (about.title|plain) if about else "") %}
{%- set home = canonical_url(path=about.page_url if about else request.prefix ~ "/") %}
{%- set updated = (found|map(attribute="modified")|max) or "1970-01-01T00:00:00Z" %}
{%- if format == "rss" %}
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
<title>{{ title|plain }}</title>
<link>{{ home }}</link>
<description>{{ (site.settings.tagline or site.settings.title)|plain }}</description>
<language>{{ request.language }}</language>
<atom:link href="{{ canonical_url() }}" rel="self" type="application/rss+xml"/>
<lastBuildDate>{{ updated|date("%a, %d %b %Y %H:%M:%S +0000") }}</lastBuildDate>
<generator>Bulwark</generator>
{%- for r in found %}
<item>
<title>{{ r.title|plain }}</title>
<link>{{ canonical_url(path=r.page_url) }}</link>
<guid isPermaLink="false">{{ canonical_url(path="/page/" ~ r.id) }}</guid>
<pubDate>{{ (r.publication_start or r.created)|date("%a, %d %b %Y %H:%M:%S +0000") }}</pubDate>
{%- for p in r.o.author %}
<dc:creator>{{ p.title|plain }}</dc:creator>
{%- endfor %}
{%- for k in r.o.subject %}
<category>{{ k.title|plain }}</category>
{%- endfor %}
<description>{{ absolute_links(r.body or ("<p>" ~ r.summary ~ "</p>"))|source }}</description>
{%- if r.enclosure and r.enclosure.url %}
<enclosure url="{{ canonical_url(path=r.enclosure.url) if r.enclosure.url[:1] == "/" else r.enclosure.url }}" length="{{ r.enclosure.length or 0 }}" type="{{ r.enclosure.type or "application/octet-stream" }}"/>
{%- endif %}
</item>
{%- endfor %}
</channel>
</rss>
{%- else %}
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="{{ request.language }}">
<title type="text">{{ title|plain }}</title>
{%- if site.settings.tagline %}
<subtitle type="text">{{ site.settings.tagline|plain }}</subtitle>
{%- endif %}
<link rel="self" type="application/atom+xml" href="{{ canonical_url() }}"/>
<link rel="alternate" type="text/html" href="{{ home }}"/>
<id>{{ canonical_url() }}</id>
<updated>{{ updated|date("%Y-%m-%dT%H:%M:%SZ") }}</updated>
<author><name>{{ site.settings.title|plain }}</name></author>
<generator>Bulwark</generator>
{%- for r in found %}
<entry>
<title type="text">{{ r.title|plain }}</title>
<link rel="alternate" type="text/html" href="{{ canonical_url(path=r.page_url) }}"/>
<id>{{ canonical_url(path="/page/" ~ r.id) }}</id>
<published>{{ (r.publication_start or r.created)|date("%Y-%m-%dT%H:%M:%SZ") }}</published>
<updated>{{ r.modified|date("%Y-%m-%dT%H:%M:%SZ") }}</updated>
{%- for p in r.o.author %}
<author><name>{{ p.title|plain }}</name></author>
{%- endfor %}
{%- for k in r.o.subject %}
<category term="{{ k.title|plain }}"/>
{%- endfor %}
{%- if r.summary %}
<summary type="text">{{ r.summary|plain }}</summary>
{%- endif %}
{%- if r.body %}
<content type="html">{{ absolute_links(r.body)|source }}</content>
{%- endif %}
{%- if r.enclosure and r.enclosure.url %}
<link rel="enclosure" href="{{ canonical_url(path=r.enclosure.url) if r.enclosure.url[:1] == "/" else r.enclosure.url }}" length="{{ r.enclosure.length or 0 }}" type="{{ r.enclosure.type or "application/octet-stream" }}"/>
{%- endif %}
</entry>
{%- endfor %}
</feed>
{%- endif %}

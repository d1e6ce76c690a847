{# `level`: the heading's, one below the heading the list stands under
   (given by position: a keyword argument costs a render more). #}
{% macro card(title, text, href, level=3) -%}
<article class="card">
  <h{{ level }}><a href="{{ href }}">{{ title }}</a></h{{ level }}>
  <p>{{ text }}</p>
</article>
{%- endmacro %}

{# A resource in a list: its picture, title, date, authors and summary. The
   date is in the page as `datetime`, for scripts that mark what is new. #}
{% macro resource_card(r, level=3) -%}
<article class="card">
  {% if image is defined %}{% for pic in r.o.depiction %}{% if loop.first %}<a class="card-picture" href="{{ r.page_url }}" tabindex="-1" aria-hidden="true">{{ image(pic.id, "thumbnail", alt="") }}</a>{% endif %}{% endfor %}{% endif %}
  <h{{ level }}><a href="{{ r.page_url }}">{{ r.title }}</a></h{{ level }}>
  {% set when = r.publication_start or r.created %}
  <p class="meta"><time datetime="{{ when }}">{{ when|date }}</time>{% for p in r.o.author %}{% if loop.first %} &middot; {{ _("by") }} {% endif %}{{ p.title }}{% if not loop.last %}, {% endif %}{% endfor %}</p>
  {% if r.summary %}<p>{{ r.summary }}</p>{% endif %}
</article>
{%- endmacro %}

{# The pager under a list made with `total=true`: the first and the last
   page, and three either side of this one; `base` is the list's URL, to
   which `page=N` is added. #}
{% macro pager(found, base) -%}
{% if found.pages > 1 %}
{% set join = "&" if "?" in base else "?" %}
{% set lo = [1, found.page - 3]|max %}{% set hi = [found.pages, found.page + 3]|min %}
<nav class="pager" aria-label="{{ _("Pages") }}">
{% if found.page > 1 %}<a href="{{ base }}{{ join }}page={{ found.page - 1 }}" rel="prev">{{ _("Newer") }}</a>{% endif %}
{% if lo > 1 %}<a href="{{ base }}{{ join }}page=1">1</a>{% if lo > 2 %}<span aria-hidden="true">&hellip;</span>{% endif %}{% endif %}
{% for p in range(lo, hi + 1) %}<a href="{{ base }}{{ join }}page={{ p }}"{% if p == found.page %} aria-current="page"{% endif %}>{{ p }}</a>
{% endfor %}
{% if hi < found.pages %}{% if hi < found.pages - 1 %}<span aria-hidden="true">&hellip;</span>{% endif %}<a href="{{ base }}{{ join }}page={{ found.pages }}">{{ found.pages }}</a>{% endif %}
{% if found.page < found.pages %}<a href="{{ base }}{{ join }}page={{ found.page + 1 }}" rel="next">{{ _("Older") }}</a>{% endif %}
</nav>
{% endif %}
{%- endmacro %}

{# A list of resources as cards, with its pager, or `empty` when there are none. #}
{% macro listing(found, base, empty) -%}
<section class="grid">
{% for r in found.items %}
  {{ resource_card(r, 2) }}
{% else %}
  <p>{{ empty }}</p>
{% endfor %}
</section>
{{ pager(found, base) }}
{%- endmacro %}

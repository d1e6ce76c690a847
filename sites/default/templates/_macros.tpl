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

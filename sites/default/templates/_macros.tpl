{% macro card(title, text, href) -%}
<article class="card">
  <h3><a href="{{ href }}">{{ title }}</a></h3>
  <p>{{ text }}</p>
</article>
{%- endmacro %}

{# A resource in a list: its picture, title, date, authors and summary. The
   date is in the page as `datetime`, for scripts that mark what is new. #}
{% macro resource_card(r) -%}
<article class="card">
  {% if image is defined %}{% for pic in r.o.depiction %}{% if loop.first %}<a class="card-picture" href="{{ r.page_url }}" tabindex="-1" aria-hidden="true">{{ image(pic.id, "thumbnail", alt="") }}</a>{% endif %}{% endfor %}{% endif %}
  <h3><a href="{{ r.page_url }}">{{ r.title }}</a></h3>
  {% set when = r.publication_start or r.created %}
  <p class="meta"><time datetime="{{ when }}">{{ when|date }}</time>{% for p in r.o.author %}{% if loop.first %} &middot; {{ _("by") }} {% endif %}{{ p.title }}{% if not loop.last %}, {% endif %}{% endfor %}</p>
  {% if r.summary %}<p>{{ r.summary }}</p>{% endif %}
</article>
{%- endmacro %}

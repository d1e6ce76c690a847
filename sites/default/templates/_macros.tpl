{% macro card(title, text, href) -%}
<article class="card">
  <h3><a href="{{ href }}">{{ title }}</a></h3>
  <p>{{ text }}</p>
</article>
{%- endmacro %}

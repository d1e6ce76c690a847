{#- GET /api/menu/{name}: the menu as the caller may see it. -#}
{%- if not m.rsc["menu_" ~ name] %}{{ not_found() }}{% endif -%}
{{ {"name": name, "items": m.menu(name)}|tojson }}

{% extends "base.tpl" %}
{% block body %}
{% set list = range(1, random(20) + 1) %}
{% if list %}
  {% for l in list %}
    -{{ l }}<br/>
  {% endfor %}
{% else %}
  Nope
{% endif %}
{% endblock %}

{% extends "base.tpl" %}
{% block body %}{% for i in range(400) %}{% for j in range(1000) %}{% endfor %}{% endfor %}expensive{% endblock %}

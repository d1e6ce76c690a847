{% extends "admin_base.tpl" %}
{% block title %}Dashboard{% endblock %}
{% block content %}
<h1>Dashboard</h1>
<h2>Recently changed</h2>
{% set recent = m.search(sort="-modified", pagelen=10) %}
<table>
  <thead><tr><th>Title</th><th>Category</th><th>Status</th><th class="wide">Changed</th></tr></thead>
  <tbody>
  {% for r in recent %}
    <tr>
      <td><a href="/admin/edit/{{ r.id }}">{{ r.title or "(untitled)" }}</a> <small>(<a href="{{ r.page_url }}">view</a>)</small></td>
      <td>{{ r.category }}</td>
      <td>{% if r.published %}published{% else %}<span class="status-draft">draft</span>{% endif %}</td>
      <td class="wide">{{ r.modified }}</td>
    </tr>
  {% else %}
    <tr><td colspan="4">Nothing yet.</td></tr>
  {% endfor %}
  </tbody>
</table>
{% endblock %}

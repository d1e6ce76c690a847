{% extends "admin_base.tpl" %}
{% block title %}Dashboard{% endblock %}
{% block content %}
<h1>Dashboard</h1>
<section aria-labelledby="figures-title">
<h2 id="figures-title">Now</h2>
{% if "push" in site_modules %}
<p id="figures-status" class="message" role="status">Waiting for the first figures&hellip;</p>
{% else %}
<p id="figures-status" class="message">Live figures come over push: enable the <code>push</code> module for this site.</p>
{% endif %}
<dl id="figures" class="figures">
  <div><dt>Requests</dt><dd data-figure="requests_per_s" data-unit="/s">&ndash;</dd></div>
  <div><dt>Page cache hits</dt><dd data-figure="page_cache_hit_ratio" data-unit="%">&ndash;</dd></div>
  <div><dt>Renders</dt><dd data-figure="renders_per_s" data-unit="/s">&ndash;</dd></div>
  <div><dt>Database connections in use</dt><dd data-figure="database">&ndash;</dd></div>
  <div><dt>Push clients</dt><dd data-figure="push_clients">&ndash;</dd></div>
  <div><dt>Refused (503) since start</dt><dd data-figure="refused">&ndash;</dd></div>
</dl>
</section>
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
      <td class="wide"><time datetime="{{ r.modified }}">{{ r.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="4">Nothing yet.</td></tr>
  {% endfor %}
  </tbody>
</table>
{% endblock %}
{% block scripts %}{% if "push" in site_modules %}{{ lib("js/bulwark.js") }}{% endif %}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}Dashboard{% endblock %}
{% block content %}
<h1>Dashboard</h1>

<section aria-labelledby="needs-title">
<h2 id="needs-title" class="visually-hidden">What needs you</h2>
<div class="cards">
  {% set drafts = m.search(status="draft", exclude="meta", sort="-modified", pagelen=5, total=true) %}
  <section class="card" id="drafts" aria-labelledby="drafts-title">
    <h2 id="drafts-title">Drafts <span class="badge draft">{{ drafts.total }}</span></h2>
    {% if drafts.items %}
    <ul class="plain items">
      {% for r in drafts.items %}
      <li><a href="/admin/edit/{{ r.id }}">{{ r.title or "(untitled)" }}</a> <small><time datetime="{{ r.modified }}">{{ r.modified }}</time></small></li>
      {% endfor %}
    </ul>
    {% if drafts.total > 5 %}<p><a href="/admin/resources?status=draft">All {{ drafts.total }} drafts</a></p>{% endif %}
    {% else %}
    <p class="empty">No drafts: everything is published.</p>
    {% endif %}
  </section>
  {% set scheduled = m.search(status="scheduled", exclude="meta", sort="publication_start", pagelen=5, total=true) %}
  <section class="card" id="scheduled" aria-labelledby="scheduled-title">
    <h2 id="scheduled-title">Scheduled <span class="badge scheduled">{{ scheduled.total }}</span></h2>
    {% if scheduled.items %}
    <ul class="plain items">
      {% for r in scheduled.items %}
      <li><a href="/admin/edit/{{ r.id }}">{{ r.title or "(untitled)" }}</a> <small>goes live <time datetime="{{ r.publication_start }}">{{ r.publication_start }}</time></small></li>
      {% endfor %}
    </ul>
    {% else %}
    <p class="empty">Nothing waits to be published: give a resource a start date under Publication to plan it.</p>
    {% endif %}
  </section>
  <section class="card" id="health" aria-labelledby="health-title">
    <h2 id="health-title">Site health</h2>
    <dl class="health">
      <dt>Database</dt>
      {% if health.database.ok %}<dd class="ok">Answers ({{ health.database.ms|round(1) }} ms)</dd>
      {% else %}<dd class="bad">Not answering: {{ health.database.error }}</dd>{% endif %}
      <dt>Disk</dt>
      {% if health.disk.error %}<dd class="warn">Unknown: {{ health.disk.error }}</dd>
      {% else %}<dd class="{{ 'warn' if health.disk.low else 'ok' }}">{{ health.disk.free }} free of {{ health.disk.total }}{% if health.disk.low %}: make room soon{% endif %}</dd>{% endif %}
      <dt>Backups</dt>
      {% if health.backup.newest %}<dd class="{{ 'warn' if health.backup.old else 'ok' }}">Newest <time datetime="{{ health.backup.newest }}">{{ health.backup.newest }}</time>{% if health.backup.old %}: more than a week old{% endif %}</dd>
      {% else %}<dd class="warn">None yet{% for item in menu if item.url == "/admin/backups" %}: <a href="/admin/backups">make one</a>{% endfor %}</dd>{% endif %}
    </dl>
  </section>
</div>
</section>

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
{% set recent = m.search(sort="-modified", exclude="meta", pagelen=10) %}
<table>
  <thead><tr><th scope="col">Title</th><th scope="col">Category</th><th scope="col">Status</th><th scope="col">Changed</th></tr></thead>
  <tbody>
  {% for r in recent %}
    <tr>
      <td class="title"><a href="/admin/edit/{{ r.id }}">{{ r.title or "(untitled)" }}</a> <small>(<a href="{{ r.page_url }}" aria-label="View {{ r.title or 'the page' }}">view</a>)</small></td>
      <td data-label="Category">{{ r.category }}</td>
      <td>{% if r.published %}<span class="badge published">published</span>{% else %}<span class="badge draft">draft</span>{% endif %}</td>
      <td data-label="Changed"><time datetime="{{ r.modified }}">{{ r.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="4"><p class="empty">Nothing yet: <a href="/admin/new">make the first page</a>.</p></td></tr>
  {% endfor %}
  </tbody>
</table>
{% endblock %}
{% block scripts %}{% if "push" in site_modules %}{{ lib("js/bulwark.js") }}{% endif %}{% endblock %}

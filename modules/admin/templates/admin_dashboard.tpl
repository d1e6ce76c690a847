{% extends "admin_base.tpl" %}
{% block title %}{{ _("Dashboard") }}{% endblock %}
{% block content %}
<h1>{{ _("Dashboard") }}</h1>

<section aria-labelledby="needs-title">
<h2 id="needs-title" class="visually-hidden">{{ _("What needs you") }}</h2>
<div class="cards">
  {# An editor's work: a person's record (every account has one, unpublished)
   is not a draft anyone writes. #}
  {% set drafts = m.search(status="draft", exclude=["meta", "person"], sort="-modified", pagelen=5, total=true) %}
  <section class="card" id="drafts" aria-labelledby="drafts-title">
    <h2 id="drafts-title">{{ _("Drafts") }} <span class="badge draft">{{ drafts.total }}</span></h2>
    {% if drafts.items %}
    <ul class="plain items">
      {% for r in drafts.items %}
      <li><a href="/admin/edit/{{ r.id }}">{{ r.title or _("(untitled)") }}</a> <small><time datetime="{{ r.modified }}">{{ r.modified }}</time></small></li>
      {% endfor %}
    </ul>
    {% if drafts.total > 5 %}<p><a href="/admin/resources?status=draft">{{ _n("All {n} draft", "All {n} drafts", drafts.total) }}</a></p>{% endif %}
    {% else %}
    <p class="empty">{{ _("No drafts: everything is published.") }}</p>
    {% endif %}
  </section>
  {% set scheduled = m.search(status="scheduled", exclude="meta", sort="publication_start", pagelen=5, total=true) %}
  <section class="card" id="scheduled" aria-labelledby="scheduled-title">
    <h2 id="scheduled-title">{{ _("Scheduled") }} <span class="badge scheduled">{{ scheduled.total }}</span></h2>
    {% if scheduled.items %}
    <ul class="plain items">
      {% for r in scheduled.items %}
      <li><a href="/admin/edit/{{ r.id }}">{{ r.title or _("(untitled)") }}</a> <small>{{ _("goes live") }} <time datetime="{{ r.publication_start }}">{{ r.publication_start }}</time></small></li>
      {% endfor %}
    </ul>
    {% else %}
    <p class="empty">{{ _("Nothing waits to be published: give a resource a start date under Publication to plan it.") }}</p>
    {% endif %}
  </section>
  {% if "comments" in site_modules %}
  <section class="card" id="comments-waiting" aria-labelledby="comments-waiting-title">
    <h2 id="comments-waiting-title">{{ _("Comments waiting") }} <span class="badge draft" data-waiting>&ndash;</span></h2>
    <ul class="plain items" data-waiting-list></ul>
    <p class="empty" data-waiting-none hidden>{{ _("No comment waits for you.") }}</p>
    <p><a href="/admin/comments">{{ _("Moderate the comments") }}</a></p>
  </section>
  {% endif %}
</div>
</section>

<h2 id="recent-title">{{ _("Recently changed") }}</h2>
{% set recent = m.search(sort="-modified", exclude="meta", pagelen=10) %}
<table>
  <thead><tr><th scope="col">{{ _("Title") }}</th><th scope="col">{{ _("Category") }}</th><th scope="col">{{ _("Status") }}</th><th scope="col">{{ _("Changed") }}</th></tr></thead>
  <tbody>
  {% for r in recent %}
    <tr>
      <td class="title"><a href="/admin/edit/{{ r.id }}">{{ r.title or _("(untitled)") }}</a> <small>(<a href="{{ r.page_url }}" aria-label="{{ _("View {title}", title=r.title or _("the page")) }}">{{ _("view") }}</a>)</small></td>
      <td data-label="{{ _("Category") }}">{{ r.category }}</td>
      <td>{% set state = r.publication_state %}<span class="badge {{ state }}">{{ _(state) }}</span></td>
      <td data-label="{{ _("Changed") }}"><time datetime="{{ r.modified }}">{{ r.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="4"><p class="empty">{{ _("Nothing yet:") }} <a href="/admin/new">{{ _("make the first page") }}</a>.</p></td></tr>
  {% endfor %}
  </tbody>
</table>

{# How the site runs, below the work. #}
<section aria-labelledby="running-title">
<h2 id="running-title">{{ _("How the site runs") }}</h2>
<div class="cards">
  <section class="card" id="health" aria-labelledby="health-title">
    <h3 id="health-title">{{ _("Site health") }}</h3>
    <dl class="health">
      <dt>{{ _("Database") }}</dt>
      {% if health.database.ok %}<dd class="ok">{{ _("Answers ({ms} ms)", ms=health.database.ms|round(1)) }}</dd>
      {% else %}<dd class="bad">{{ _("Not answering: {error}", error=health.database.error) }}</dd>{% endif %}
      <dt>{{ _("Disk") }}</dt>
      {% if health.disk.error %}<dd class="warn">{{ _("Unknown: {error}", error=health.disk.error) }}</dd>
      {% else %}<dd class="{{ 'warn' if health.disk.low else 'ok' }}">{% if health.disk.low %}{{ _("{free} free of {total}: make room soon", free=health.disk.free, total=health.disk.total) }}{% else %}{{ _("{free} free of {total}", free=health.disk.free, total=health.disk.total) }}{% endif %}</dd>{% endif %}
      <dt>{{ _("Backups") }}</dt>
      {% if health.backup.newest %}<dd class="{{ 'warn' if health.backup.old else 'ok' }}">{{ _("Newest") }} <time datetime="{{ health.backup.newest }}">{{ health.backup.newest }}</time>{% if health.backup.old %}: {{ _("more than a week old") }}{% endif %}</dd>
      {% else %}<dd class="warn">{{ _("None yet") }}{% for item in menu if item.url == "/admin/backups" %}: <a href="/admin/backups">{{ _("make one") }}</a>{% endfor %}</dd>{% endif %}
    </dl>
  </section>
</div>

<section aria-labelledby="figures-title">
<h3 id="figures-title">{{ _("Now") }}</h3>
{% if "push" in site_modules %}
<p id="figures-status" class="message" role="status">{{ _("Waiting for the first figures…") }}</p>
{% else %}
<p id="figures-status" class="message">{{ _("Live figures come over push: enable the") }} <code>push</code> {{ _("module for this site.") }}</p>
{% endif %}
<dl id="figures" class="figures">
  <div><dt>{{ _("Requests") }}</dt><dd data-figure="requests_per_s" data-unit="/s">&ndash;</dd></div>
  <div><dt>{{ _("Page cache hits") }}</dt><dd data-figure="page_cache_hit_ratio" data-unit="%">&ndash;</dd></div>
  <div><dt>{{ _("Renders") }}</dt><dd data-figure="renders_per_s" data-unit="/s">&ndash;</dd></div>
  <div><dt>{{ _("Database connections in use") }}</dt><dd data-figure="database">&ndash;</dd></div>
  <div><dt>{{ _("Push clients") }}</dt><dd data-figure="push_clients">&ndash;</dd></div>
  <div><dt>{{ _("Refused (503) since start") }}</dt><dd data-figure="refused">&ndash;</dd></div>
</dl>
</section>
</section>
{% endblock %}
{% block scripts %}{% if "push" in site_modules %}{{ lib("js/bulwark.js") }}{% endif %}{% endblock %}

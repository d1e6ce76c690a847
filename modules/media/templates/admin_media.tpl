{% extends "admin_base.tpl" %}
{% block title %}{{ _("Media") }}{% endblock %}
{% block content %}
<h1>{{ _("Media") }}</h1>
<section id="library" aria-labelledby="upload-title">
  <h2 id="upload-title" class="visually-hidden">{{ _("Upload") }}</h2>
  <div id="dropzone" class="dropzone">
    <p>{{ _("Drop files here, or") }}
      <label class="button">{{ _("choose files") }}<input id="files" type="file" multiple hidden></label></p>
    <p><small>{{ _("Images, PDF, video and audio, as this site takes them. What a file is, is read from its content.") }}</small></p>
  </div>
  <ul id="uploads" class="plain" aria-label="{{ _("Uploads") }}" aria-live="polite"></ul>
</section>
{% set found = m.search(cat="media", sort="-created", page=q.page, pagelen=40, total=true) %}
<h2>{{ _("In the library") }} (<span id="media-count">{{ found.total }}</span>)</h2>
<ul id="media-grid" class="media-grid plain">
{% for r in found.items %}
  <li>
    <a href="/admin/edit/{{ r.id }}">
      {% if r.category == "image" %}{{ image(r.id, "thumbnail") }}{% else %}<span class="media-kind">{{ r.category }}</span>{% endif %}
      <span class="media-title">{{ r.title or r.original_name or r.id }}</span>
    </a>
    <small>{{ r.mime }}{% if r.width %}, {{ r.width }}&times;{{ r.height }}{% endif %}</small>
  </li>
{% else %}
  <li id="media-empty">{{ _("Nothing yet.") }}</li>
{% endfor %}
</ul>
{% if found.total > 40 %}
<nav aria-label="{{ _("Pages") }}"><p>
  {% if (q.page or 1)|int > 1 %}<a href="?page={{ (q.page or 1)|int - 1 }}">{{ _("Newer") }}</a>{% endif %}
  {% if ((q.page or 1)|int) * 40 < found.total %}<a href="?page={{ (q.page or 1)|int + 1 }}">{{ _("Older") }}</a>{% endif %}
</p></nav>
{% endif %}
{% endblock %}
{% block scripts %}{{ lib("js/admin-media.js") }}{% endblock %}

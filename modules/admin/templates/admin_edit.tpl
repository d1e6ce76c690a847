{% extends "admin_base.tpl" %}
{% set r = m.rsc[id] %}
{% block title %}{% if r %}Edit {{ r.title or "(untitled)" }}{% else %}Not found{% endif %}{% endblock %}
{% block content %}
{% if not r %}
<h1>Not found</h1>
<p>There is no resource {{ id }}, or you may not see it. <a href="/admin/resources">Back to the list</a>.</p>
{% elif not m.acl.may("update", r.id) %}
<h1>{{ r.title or "(untitled)" }}</h1>
<p>You may see this {{ r.category }} but not change it. <a href="{{ r.page_url }}">View it</a>.</p>
{% else %}
<h1>Edit: <span id="heading">{{ r.title or "(untitled)" }}</span></h1>
<p><a href="{{ r.page_url }}">View the page</a> &middot; {{ r.category }}</p>
<form id="editor" class="editor" data-id="{{ r.id }}" data-version="{{ r.version }}" data-csrf="{{ request.csrf_token }}">
  <p><label for="title">Title</label><br>
     <input id="title" name="title" value="{{ r.title or '' }}" required size="60"></p>
  <p><label for="summary">Summary</label><br>
     <textarea id="summary" name="summary" rows="3" cols="60">{{ r.summary or '' }}</textarea></p>
  <p><label for="body">Body (HTML)</label><br>
     <textarea id="body" name="body" rows="12" cols="60">{{ r.body or '' }}</textarea></p>
  <p><label><input id="published" name="published" type="checkbox"{% if r.published %} checked{% endif %}> Published</label></p>
  <p><button type="submit">Save</button></p>
  <p id="status" role="status" aria-live="polite"></p>
</form>
{{ lib("js/admin-edit.js") }}
{% endif %}
{% endblock %}

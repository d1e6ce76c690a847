{% extends "admin_base.tpl" %}
{% block title %}Resources{% endblock %}
{% block content %}
<h1>Resources</h1>
<form class="filter" action="/admin/resources" role="search">
  <label>Text <input name="text" value="{{ q.text or '' }}" type="search"></label>
  <label>Category
    <select name="cat">
      <option value="">all</option>
      {% for c in m.category %}
      <option value="{{ c.name }}"{% if c.name == q.cat %} selected{% endif %}>{{ "– " * c.depth }}{{ c.title or c.name }}</option>
      {% endfor %}
    </select>
  </label>
  <label>Status
    <select name="status">
      {% for value, label in [("", "all"), ("published", "published"), ("draft", "draft")] %}
      <option value="{{ value }}"{% if value == (q.status or "") %} selected{% endif %}>{{ label }}</option>
      {% endfor %}
    </select>
  </label>
  <label>Order
    <select name="sort">
      {% for value, label in [("-modified", "last changed"), ("-created", "newest"), ("title", "title")] %}
      <option value="{{ value }}"{% if value == (q.sort or "-modified") %} selected{% endif %}>{{ label }}</option>
      {% endfor %}
    </select>
  </label>
  <button type="submit">Find</button>
</form>
{% set sort = q.sort if q.sort in ["-modified", "-created", "title"] else "-modified" %}
{% set status = q.status if q.status in ["published", "draft"] else "" %}
{% if q.cat and m.category[q.cat] %}
  {% set found = m.search(cat=q.cat, text=q.text, sort=sort, status=status, page=q.page, pagelen=20, total=true) %}
{% else %}
  {% set found = m.search(text=q.text, sort=sort, status=status, page=q.page, pagelen=20, total=true) %}
{% endif %}
<p>{{ found.total }} found.</p>
<form id="bulk">
<p class="bulk-actions">
  <button type="submit" name="action" value="publish">Publish selected</button>
  <button type="submit" name="action" value="unpublish">Unpublish selected</button>
  <button type="submit" name="action" value="delete">Delete selected</button>
</p>
<p id="bulk-status" class="message" role="status" aria-live="polite"></p>
<table>
  <thead><tr><th><input type="checkbox" id="select-all" aria-label="Select all on this page"></th><th>Title</th><th>Category</th><th>Status</th><th class="wide">Changed</th></tr></thead>
  <tbody>
  {% for r in found.items %}
    <tr>
      <td><input type="checkbox" name="id" value="{{ r.id }}" aria-label="Select {{ r.title or r.id }}"{% if not m.acl.may("update", r.id) %} disabled{% endif %}></td>
      <td><a href="/admin/edit/{{ r.id }}">{{ r.title or "(untitled)" }}</a> <small>(<a href="{{ r.page_url }}">view</a>)</small></td>
      <td>{{ r.category }}</td>
      <td>{% if r.published %}published{% else %}<span class="status-draft">draft</span>{% endif %}</td>
      <td class="wide"><time datetime="{{ r.modified }}">{{ r.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="5">Nothing found.</td></tr>
  {% endfor %}
  </tbody>
</table>
</form>
{% if found.pages > 1 %}
<nav class="pager" aria-label="Pages">
  {% for p in range(1, found.pages + 1) %}
  <a href="/admin/resources?text={{ q.text or '' | urlencode }}&amp;cat={{ q.cat or '' | urlencode }}&amp;sort={{ sort | urlencode }}&amp;status={{ status | urlencode }}&amp;page={{ p }}"{% if p == found.page %} aria-current="page"{% endif %}>{{ p }}</a>
  {% endfor %}
</nav>
{% endif %}
{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}Resources{% endblock %}
{% block content %}
<h1>Resources</h1>
{% set media = "media" in site_modules %}
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
  <label class="check"><input type="checkbox" name="all" value="1"{% if q.all %} checked{% endif %}> Also the site's machinery</label>
  <button type="submit" class="primary">Find</button>
</form>
{% set sort = q.sort if q.sort in ["-modified", "-created", "title"] else "-modified" %}
{% set status = q.status if q.status in ["published", "draft"] else "" %}
{# Content first: categories, predicates and user groups (the category
   "meta") only when asked for, or when their category is chosen. #}
{% set exclude = [] if q.all or q.cat else ["meta"] %}
{% if q.cat and m.category[q.cat] %}
  {% set found = m.search(cat=q.cat, text=q.text, sort=sort, status=status, page=q.page, pagelen=20, total=true) %}
{% else %}
  {% set found = m.search(text=q.text, exclude=exclude, sort=sort, status=status, page=q.page, pagelen=20, total=true) %}
{% endif %}
<div class="list-head">
<p id="found">{{ found.total }} found.</p>
<p><a class="button" href="/admin/new">New resource</a></p>
</div>
<form id="bulk">
<p class="bulk-actions">
  <button type="submit" name="action" value="publish">Publish selected</button>
  <button type="submit" name="action" value="unpublish">Unpublish selected</button>
  <button type="submit" name="action" value="delete" class="danger">Delete selected</button>
</p>
<p id="bulk-status" class="message" role="status" aria-live="polite"></p>
<table class="selectable">
  <thead><tr><th scope="col"><input type="checkbox" id="select-all" aria-label="Select all on this page"></th>{% if media %}<th scope="col"><span class="visually-hidden">Picture</span></th>{% endif %}<th scope="col">Title</th><th scope="col">Category</th><th scope="col">Status</th><th scope="col">Changed</th></tr></thead>
  <tbody>
  {% for r in found.items %}
    <tr>
      <td class="select"><input type="checkbox" name="id" value="{{ r.id }}" aria-label="Select {{ r.title or r.id }}"{% if not m.acl.may("update", r.id) %} disabled{% endif %}></td>
      {% if media %}<td class="thumb">{% if r.category == "image" %}{{ image(r.id, "thumbnail", alt="") }}{% elif r.o.depiction %}{{ image(r.o.depiction[0].id, "thumbnail", alt="") }}{% else %}<span class="placeholder"></span>{% endif %}</td>{% endif %}
      <td class="title"><a href="/admin/edit/{{ r.id }}">{{ r.title or "(untitled)" }}</a> <small>(<a href="{{ r.page_url }}" aria-label="View {{ r.title or 'the page' }}">view</a>)</small></td>
      <td data-label="Category">{{ r.category }}</td>
      <td>{% if r.published %}<span class="badge published">published</span>{% else %}<span class="badge draft">draft</span>{% endif %}</td>
      <td data-label="Changed"><time datetime="{{ r.modified }}">{{ r.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="6"><p class="empty">Nothing found{% if q.text %} for &ldquo;{{ q.text }}&rdquo;{% endif %}. <a href="/admin/resources">Show everything</a></p></td></tr>
  {% endfor %}
  </tbody>
</table>
</form>
{% if found.pages > 1 %}
<nav class="pager" aria-label="Pages">
  {% for p in range(1, found.pages + 1) %}
  <a href="/admin/resources?text={{ q.text or '' | urlencode }}&amp;cat={{ q.cat or '' | urlencode }}&amp;sort={{ sort | urlencode }}&amp;status={{ status | urlencode }}{% if q.all %}&amp;all=1{% endif %}&amp;page={{ p }}"{% if p == found.page %} aria-current="page"{% endif %}>{{ p }}</a>
  {% endfor %}
</nav>
{% endif %}
{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}{{ _("Resources") }}{% endblock %}
{% block content %}
<h1>{{ _("Resources") }}</h1>
{% set media = "media" in site_modules %}
<form class="filter" action="/admin/resources" role="search">
  <label>{{ _("Text") }} <input name="text" value="{{ q.text or '' }}" type="search"></label>
  <label>{{ _("Category") }}
    <select name="cat">
      <option value="">{{ _("all") }}</option>
      {% for c in m.category %}
      <option value="{{ c.name }}"{% if c.name == q.cat %} selected{% endif %}>{{ "– " * c.depth }}{{ c.title or c.name }}</option>
      {% endfor %}
    </select>
  </label>
  <label>{{ _("Status") }}
    <select name="status">
      {% for value, label in [("", N_("all")), ("published", N_("published")), ("draft", N_("draft"))] %}
      <option value="{{ value }}"{% if value == (q.status or "") %} selected{% endif %}>{{ _(label) }}</option>
      {% endfor %}
    </select>
  </label>
  <label>{{ _("Order") }}
    <select name="sort">
      {% for value, label in [("-modified", N_("last changed")), ("-created", N_("newest")), ("title", N_("title"))] %}
      <option value="{{ value }}"{% if value == (q.sort or "-modified") %} selected{% endif %}>{{ _(label) }}</option>
      {% endfor %}
    </select>
  </label>
  <label class="check"><input type="checkbox" name="all" value="1"{% if q.all %} checked{% endif %}> {{ _("Also the site's machinery") }}</label>
  <button type="submit" class="primary">{{ _("Find") }}</button>
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
<p id="found">{{ _n("{n} found.", "{n} found.", found.total) }}</p>
<p><a class="button" href="/admin/new">{{ _("New resource") }}</a></p>
</div>
<form id="bulk">
<p class="bulk-actions">
  <button type="submit" name="action" value="publish">{{ _("Publish selected") }}</button>
  <button type="submit" name="action" value="unpublish">{{ _("Unpublish selected") }}</button>
  <button type="submit" name="action" value="delete" class="danger">{{ _("Delete selected") }}</button>
</p>
<p id="bulk-status" class="message" role="status" aria-live="polite"></p>
<table class="selectable">
  <thead><tr><th scope="col"><input type="checkbox" id="select-all" aria-label="{{ _("Select all on this page") }}"></th>{% if media %}<th scope="col"><span class="visually-hidden">{{ _("Picture") }}</span></th>{% endif %}<th scope="col">{{ _("Title") }}</th><th scope="col">{{ _("Category") }}</th><th scope="col">{{ _("Status") }}</th><th scope="col">{{ _("Changed") }}</th></tr></thead>
  <tbody>
  {% for r in found.items %}
    <tr>
      <td class="select"><input type="checkbox" name="id" value="{{ r.id }}" aria-label="{{ _("Select {name}", name=r.title or r.id) }}"{% if not m.acl.may("update", r.id) %} disabled{% endif %}></td>
      {% if media %}<td class="thumb">{% if r.category == "image" %}{{ image(r.id, "thumbnail", alt="") }}{% elif r.o.depiction %}{{ image(r.o.depiction[0].id, "thumbnail", alt="") }}{% else %}<span class="placeholder"></span>{% endif %}</td>{% endif %}
      <td class="title"><a href="/admin/edit/{{ r.id }}">{{ r.title or _("(untitled)") }}</a> <small>(<a href="{{ r.page_url }}" aria-label="{{ _("View {title}", title=r.title or _("the page")) }}">{{ _("view") }}</a>)</small></td>
      <td data-label="{{ _("Category") }}">{{ r.category }}</td>
      <td>{% if r.published %}<span class="badge published">{{ _("published") }}</span>{% else %}<span class="badge draft">{{ _("draft") }}</span>{% endif %}</td>
      <td data-label="{{ _("Changed") }}"><time datetime="{{ r.modified }}">{{ r.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="6"><p class="empty">{% if q.text %}{{ _("Nothing found for “{text}”.", text=q.text) }}{% else %}{{ _("Nothing found.") }}{% endif %} <a href="/admin/resources">{{ _("Show everything") }}</a></p></td></tr>
  {% endfor %}
  </tbody>
</table>
</form>
{% if found.pages > 1 %}
<nav class="pager" aria-label="{{ _("Pages") }}">
  {% for p in range(1, found.pages + 1) %}
  <a href="/admin/resources?text={{ q.text or '' | urlencode }}&amp;cat={{ q.cat or '' | urlencode }}&amp;sort={{ sort | urlencode }}&amp;status={{ status | urlencode }}{% if q.all %}&amp;all=1{% endif %}&amp;page={{ p }}"{% if p == found.page %} aria-current="page"{% endif %}>{{ p }}</a>
  {% endfor %}
</nav>
{% endif %}
{% endblock %}

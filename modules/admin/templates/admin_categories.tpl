{% extends "admin_base.tpl" %}
{% block title %}{{ _("Categories") }}{% endblock %}
{% block content %}
<h1>{{ _("Categories") }}</h1>
<p>{{ _("Every resource is in one category; a category holds everything below it") }}
({{ _("an") }} <em>article</em> {{ _("is also") }} <em>text</em>). {{ _("Drag a category by its handle to move it, with everything below it, or use its form.") }}</p>
<p id="category-status" class="message" role="status" aria-live="polite"></p>
{% set cats = m.category %}
{% set roots = cats | selectattr("depth", "eq", 0) | list %}
<div id="category-tree">
<ul class="categories" data-parent="">
{% for c in roots recursive %}
  <li data-name="{{ c.name }}">
    <span class="drag" aria-hidden="true" title="{{ _("Drag to move") }}">&#8942;&#8942;</span>
    <strong>{{ c.title }}</strong> <code>{{ c.name }}</code>
    <span class="row-actions">
      <button type="button" class="category-up" data-name="{{ c.name }}" data-parent="{{ c.parent.name if c.parent else '' }}" data-index="{{ loop.index0 }}" aria-label="{{ _("Move {name} up", name=c.name) }}"{% if loop.first %} disabled{% endif %}>&uarr;</button>
      <button type="button" class="category-down" data-name="{{ c.name }}" data-parent="{{ c.parent.name if c.parent else '' }}" data-index="{{ loop.index0 }}" aria-label="{{ _("Move {name} down", name=c.name) }}"{% if loop.last %} disabled{% endif %}>&darr;</button>
      <form class="move-category inline" data-name="{{ c.name }}">
        <label>{{ _("Under") }}
          <select name="parent" aria-label="{{ _("New parent of {name}", name=c.name) }}">
            <option value="">{{ _("(the top)") }}</option>
            {% for p in cats if not p.is_a(c.name) %}
            <option value="{{ p.name }}"{% if c.parent and c.parent.name == p.name %} selected{% endif %}>{{ "– " * p.depth }}{{ p.name }}</option>
            {% endfor %}
          </select>
        </label>
        <button type="submit" aria-label="{{ _("Move {name}", name=c.name) }}">{{ _("Move") }}</button>
      </form>
    </span>
    <ul class="categories" data-parent="{{ c.name }}">{% if c.children %}{{ loop(c.children) }}{% endif %}</ul>
  </li>
{% endfor %}
</ul>
</div>

<h2>{{ _("New category") }}</h2>
<form id="new-category" class="stacked">
  <label>{{ _("Name") }} <input name="name" required pattern="[a-z][a-z0-9_]*" title="{{ _("lower case letters, digits and _") }}"></label>
  <label>{{ _("Title") }} <input name="title" required></label>
  <label>{{ _("Under") }}
    <select name="parent">
      <option value="">{{ _("(the top)") }}</option>
      {% for p in cats %}<option value="{{ p.name }}">{{ "– " * p.depth }}{{ p.name }}</option>{% endfor %}
    </select>
  </label>
  <button type="submit">{{ _("Add the category") }}</button>
</form>
{% endblock %}
{% block scripts %}{{ lib("vendor/sortable.min.js") }}{% endblock %}

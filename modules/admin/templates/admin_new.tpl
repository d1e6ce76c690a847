{% extends "admin_base.tpl" %}
{% block title %}{{ _("New") }}{% endblock %}
{% block content %}
<h1>{{ _("New") }}</h1>
<p>{{ _("Give it a category and a title; the editor opens on the new draft, which nobody else sees until you publish it.") }}</p>
<form id="new-resource" class="stacked">
  <label>{{ _("Category") }}
    <select name="category" required>
      {% for c in m.category %}{% if m.acl.may_insert(c.name) %}<option value="{{ c.name }}"{% if c.name == (q.cat or "article") %} selected{% endif %}>{{ "– " * c.depth }}{{ c.name }}</option>{% endif %}{% endfor %}
    </select>
  </label>
  <label>{{ _("Title") }} <input name="title" required size="40"></label>
  <button type="submit">{{ _("Make it and edit") }}</button>
</form>
<p id="new-status" class="message" role="status" aria-live="polite"></p>
{% endblock %}

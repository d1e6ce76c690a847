{% extends "admin_base.tpl" %}
{% block title %}{{ _("Predicates") }}{% endblock %}
{% block content %}
<h1>{{ _("Predicates") }}</h1>
<p>{{ _("A predicate names a kind of connection") }} ({{ _("an") }} <em>author</em>, {{ _("what a page is") }}
<em>about</em>). {{ _("It may be limited to subjects and objects of some categories (and those below them); none selected allows any.") }}</p>
<p id="predicate-status" class="message" role="status" aria-live="polite"></p>
<div id="predicate-list"></div>
<template id="category-options">
  {% for c in m.category %}<option value="{{ c.name }}">{{ "– " * c.depth }}{{ c.name }}</option>{% endfor %}
</template>
{% endblock %}

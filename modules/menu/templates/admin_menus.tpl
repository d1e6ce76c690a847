{% extends "admin_base.tpl" %}
{% block title %}{{ _("Menus") }}{% endblock %}
{% block content %}
<h1>{{ _("Menus") }}</h1>
<p>{{ _("A menu is a list of pages and links, nested up to four levels, that templates show with") }}
<code>m.menu("name")</code>: {{ _("the starter site's navigation is the menu") }} <code>main</code>. {{ _("Each visitor sees only the items they may see. Open a menu to change it.") }}</p>
{% set menus = m.search(cat="menu", sort="title", pagelen=100) %}
<table>
  <thead><tr><th scope="col">{{ _("Menu") }}</th><th scope="col">{{ _("In templates") }}</th><th scope="col">{{ _("Changed") }}</th></tr></thead>
  <tbody>
  {% for menu in menus %}
    <tr>
      <td class="title"><a href="/admin/edit/{{ menu.id }}">{{ menu.title or menu.name }}</a></td>
      <td data-label="{{ _("In templates") }}">{% if menu.name is startingwith("menu_") %}<code>m.menu("{{ menu.name[5:] }}")</code>{% else %}<span class="muted">{{ _("no name: give it one that starts with menu_") }}</span>{% endif %}</td>
      <td data-label="{{ _("Changed") }}"><time datetime="{{ menu.modified }}">{{ menu.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="3"><p class="empty">{{ _("No menus yet: make the first one below.") }}</p></td></tr>
  {% endfor %}
  </tbody>
</table>
<form id="new-menu" class="stacked">
  <h2>{{ _("New menu") }}</h2>
  <label>{{ _("Name") }} <input name="name" required pattern="[a-z][a-z0-9_]*" maxlength="60" aria-describedby="new-menu-help"></label>
  <label>{{ _("Title") }} <input name="title" required maxlength="200"></label>
  <button type="submit" class="primary">{{ _("Make the menu") }}</button>
  <small id="new-menu-help">{{ _("The name templates use: a-z, 0-9 and _, e.g.") }} <code>footer</code>.</small>
</form>
<p id="new-menu-status" class="message" role="status" aria-live="polite"></p>
{% endblock %}
{% block scripts %}{{ lib("js/admin-menu.js") }}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}Menus{% endblock %}
{% block content %}
<h1>Menus</h1>
<p>A menu is a list of pages and links, nested up to four levels, that templates show with
<code>m.menu("name")</code>: the starter site's navigation is the menu <code>main</code>. Each
visitor sees only the items they may see. Open a menu to change it.</p>
{% set menus = m.search(cat="menu", sort="title", pagelen=100) %}
<table>
  <thead><tr><th scope="col">Menu</th><th scope="col">In templates</th><th scope="col">Changed</th></tr></thead>
  <tbody>
  {% for menu in menus %}
    <tr>
      <td class="title"><a href="/admin/edit/{{ menu.id }}">{{ menu.title or menu.name }}</a></td>
      <td data-label="In templates">{% if menu.name is startingwith("menu_") %}<code>m.menu("{{ menu.name[5:] }}")</code>{% else %}<span class="muted">no name: give it one that starts with menu_</span>{% endif %}</td>
      <td data-label="Changed"><time datetime="{{ menu.modified }}">{{ menu.modified }}</time></td>
    </tr>
  {% else %}
    <tr><td colspan="3"><p class="empty">No menus yet: make the first one below.</p></td></tr>
  {% endfor %}
  </tbody>
</table>
<form id="new-menu" class="stacked">
  <h2>New menu</h2>
  <label>Name <input name="name" required pattern="[a-z][a-z0-9_]*" maxlength="60" aria-describedby="new-menu-help"></label>
  <label>Title <input name="title" required maxlength="200"></label>
  <button type="submit" class="primary">Make the menu</button>
  <small id="new-menu-help">The name templates use: a-z, 0-9 and _, e.g. <code>footer</code>.</small>
</form>
<p id="new-menu-status" class="message" role="status" aria-live="polite"></p>
{% endblock %}
{% block scripts %}{{ lib("js/admin-menu.js") }}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}{{ _("Users and groups") }}{% endblock %}
{% block content %}
<h1>{{ _("Users and groups") }}</h1>
<p>{{ _("Tick a box to put someone in a group, untick it to take them out. A group's people count as people of the groups below it in the tree (an editor is also a member). Only people in a group may put others in it.") }}</p>
<p id="users-status" class="message" role="status" aria-live="polite"></p>
{% set groups = m.search(cat="acl_user_group", sort="id", pagelen=100) %}
{% set users = m.search(cat="person", sort="title", pagelen=200) %}
<div class="scroll">
<table id="users">
  <thead><tr><th scope="col">{{ _("User") }}</th>{% for g in groups if g.name != "acl_user_group_anonymous" %}<th scope="col">{{ g.title or g.name }}</th>{% endfor %}</tr></thead>
  <tbody>
  {% for u in users %}
    {% set mine = u.o.hasusergroup | map(attribute="id") | list %}
    {% if mine %}
    <tr>
      <th scope="row"><a href="/admin/edit/{{ u.id }}">{{ u.title }}</a></th>
      {% for g in groups if g.name != "acl_user_group_anonymous" %}
      <td data-label="{{ g.title or g.name }}"><input type="checkbox" class="membership" data-person="{{ u.id }}" data-group="{{ g.id }}"
        data-username="{{ u.title }}" data-group-name="{{ g.title or g.name }}"
        aria-label="{{ _("{user} in {group}", user=u.title or "", group=g.title or g.name) }}"{% if g.id in mine %} checked{% endif %}
        {% if not m.acl.may("link", u.id) or (g.name | replace("acl_user_group_", "")) not in my_groups %} disabled{% endif %}></td>
      {% endfor %}
    </tr>
    {% endif %}
  {% else %}
    <tr><td>{{ _("No users you may see.") }}</td></tr>
  {% endfor %}
  </tbody>
</table>
</div>

<h2>{{ _("New user") }}</h2>
<form id="new-user" class="stacked" autocomplete="off">
  <label>{{ _("Username") }} <input name="username" required maxlength="80" pattern="\S+" title="{{ _("no spaces") }}"></label>
  <label>{{ _("Password") }} <input name="password" type="password" required minlength="8" autocomplete="new-password"></label>
  <label>{{ _("E-mail") }} <input name="email" type="email"></label>
  <label>{{ _("Group") }}
    <select name="group">
      {% for g in groups if g.name != "acl_user_group_anonymous" %}
      {% set short = g.name | replace("acl_user_group_", "") %}
      {% if short in my_groups %}<option value="{{ short }}"{% if short == "members" %} selected{% endif %}>{{ g.title or short }}</option>{% endif %}
      {% endfor %}
    </select>
  </label>
  <button type="submit">{{ _("Add the user") }}</button>
</form>

<h2>{{ _("Groups") }}</h2>
<ul>
{% for g in groups %}
  <li>{{ g.title or g.name }}{% set parent = g.o.hasparentgroup %}{% if parent %}: {{ _("also counts as {group}", group=parent[0].title or parent[0].name) }}{% endif %}</li>
{% endfor %}
</ul>
{% endblock %}

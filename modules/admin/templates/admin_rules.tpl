{% extends "admin_base.tpl" %}
{% block title %}Access rules{% endblock %}
{% block content %}
<h1>Access rules</h1>
<p>Each rule lets the people of a user group (and of every group above it) do
some things to resources of some categories (and those below them) in a
content group. What no rule allows is refused; administrators may do
everything. The same rules decide pages, search, the JSON API and push.</p>
{% set groups = m.search(cat="acl_user_group", sort="id", pagelen=100) %}
<form id="view-as" class="stacked">
  <h2>View the site as</h2>
  <p>See the site as the people of a group see it, with these rules: in this
  browser, every page, search and live update is shown as to someone in only
  that group, until you stop. The admin stays yours.</p>
  <label>Group
    <select name="group">
      <option value="anonymous">Anonymous visitors</option>
      {% for g in groups %}{% set short = g.name | replace("acl_user_group_", "") %}{% if short in my_groups and short != "anonymous" %}<option value="{{ short }}">{{ g.title or short }}</option>{% endif %}{% endfor %}
    </select>
  </label>
  <button type="submit">View the site</button>
  <button type="button" id="view-as-stop">Stop</button>
  <p id="view-as-status" class="message" role="status" aria-live="polite"></p>
</form>
<p id="rules-source"></p>
<p id="rules-status" class="message" role="status" aria-live="polite"></p>
<form id="rules">
<div class="scroll">
<table>
  <thead><tr><th scope="col">Group</th><th scope="col">May</th><th scope="col">Content group</th><th scope="col">Categories</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p>
  <button type="button" id="add-rule">Add a rule</button>
  <button type="submit">Save the rules</button>
  <button type="button" id="forget-rules">Use site.toml's rules</button>
</p>
</form>
<template id="rule-row">
  <tr>
    <td><select class="rule-group" aria-label="Group">
      {% for g in groups %}{% set short = g.name | replace("acl_user_group_", "") %}<option value="{{ short }}">{{ g.title or short }}</option>{% endfor %}
    </select></td>
    <td class="actions">
      {% for a in ["view", "insert", "update", "delete", "link"] %}
      <label><input type="checkbox" class="rule-action" value="{{ a }}"> {{ a }}</label>
      {% endfor %}
    </td>
    <td><input class="rule-content-group" aria-label="Content group" placeholder="every content group" size="12"></td>
    <td><input class="rule-categories" aria-label="Categories" placeholder="every category" size="22"></td>
    <td><button type="button" class="remove-rule" aria-label="Remove this rule">&times;</button></td>
  </tr>
</template>
{% endblock %}

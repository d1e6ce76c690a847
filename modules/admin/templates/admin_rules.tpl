{% extends "admin_base.tpl" %}
{% block title %}{{ _("Access rules") }}{% endblock %}
{% block content %}
<h1>{{ _("Access rules") }}</h1>
<p>{{ _("Each rule lets the people of a user group (and of every group above it) do some things to resources of some categories (and those below them) in a content group. What no rule allows is refused; administrators may do everything. The same rules decide pages, search, the JSON API and push.") }}</p>
{% set groups = m.search(cat="acl_user_group", sort="id", pagelen=100) %}
<form id="view-as" class="stacked">
  <h2>{{ _("View the site as") }}</h2>
  <p>{{ _("See the site as the people of a group see it, with these rules: in this browser, every page, search and live update is shown as to someone in only that group, until you stop. The admin stays yours.") }}</p>
  <label>{{ _("Group") }}
    <select name="group">
      <option value="anonymous">{{ _("Anonymous visitors") }}</option>
      {% for g in groups %}{% set short = g.name | replace("acl_user_group_", "") %}{% if short in my_groups and short != "anonymous" %}<option value="{{ short }}">{{ g.title or short }}</option>{% endif %}{% endfor %}
    </select>
  </label>
  <button type="submit">{{ _("View the site") }}</button>
  <button type="button" id="view-as-stop">{{ _("Stop") }}</button>
  <p id="view-as-status" class="message" role="status" aria-live="polite"></p>
</form>
<p id="rules-source"></p>
<p id="rules-status" class="message" role="status" aria-live="polite"></p>
<form id="rules">
<div class="scroll">
<table>
  <thead><tr><th scope="col">{{ _("Group") }}</th><th scope="col">{{ _("May") }}</th><th scope="col">{{ _("Content group") }}</th><th scope="col">{{ _("Categories") }}</th><th scope="col">{{ _("Only their own") }}</th><th scope="col"><span class="visually-hidden">{{ _("Remove") }}</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p>
  <button type="button" id="add-rule">{{ _("Add a rule") }}</button>
  <button type="submit">{{ _("Save the rules") }}</button>
  <button type="button" id="forget-rules">{{ _("Use site.toml's rules") }}</button>
</p>
</form>
<template id="rule-row">
  <tr>
    <td><select class="rule-group" aria-label="{{ _("Group") }}">
      {% for g in groups %}{% set short = g.name | replace("acl_user_group_", "") %}<option value="{{ short }}">{{ g.title or short }}</option>{% endfor %}
    </select></td>
    <td class="actions">
      {% for a, label in [("view", N_("view")), ("insert", N_("insert")), ("update", N_("update")), ("delete", N_("delete")), ("link", N_("link"))] %}
      <label><input type="checkbox" class="rule-action" value="{{ a }}"> {{ _(label) }}</label>
      {% endfor %}
    </td>
    <td><input class="rule-content-group" aria-label="{{ _("Content group") }}" placeholder="{{ _("every content group") }}" size="12"></td>
    <td><input class="rule-categories" aria-label="{{ _("Categories") }}" placeholder="{{ _("every category") }}" size="22"></td>
    <td><input type="checkbox" class="rule-own" aria-label="{{ _("Only what they made (and new ones)") }}"></td>
    <td><button type="button" class="remove-rule" aria-label="{{ _("Remove this rule") }}">&times;</button></td>
  </tr>
</template>
{% endblock %}

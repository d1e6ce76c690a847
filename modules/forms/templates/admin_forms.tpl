{% extends "admin_base.tpl" %}
{% block title %}{{ _("Forms") }}{% endblock %}
{% block content %}
{% set chosen = m.rsc[q.form|int] if q.form else none %}
{% if chosen and chosen.is_a("form") %}
<h1>{{ _("Answers to “{title}”", title=chosen.title) }}</h1>
<p><a href="/admin/forms">{{ _("All forms") }}</a> · <a href="/admin/edit/{{ chosen.id }}">{{ _("Change the form") }}</a> ·
   <a class="button" href="/api/forms/{{ chosen.id }}/submissions.csv" download>{{ _("Download as CSV") }}</a></p>
<p id="answers-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap" id="answers" data-form="{{ chosen.id }}">
<table id="answers-table">
  <thead><tr></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="answers-empty" class="empty" hidden>{{ _("No answers yet.") }}</p>
<p><button type="button" id="answers-more" hidden>{{ _("Older answers") }}</button></p>
{% else %}
<h1>{{ _("Forms") }}</h1>
<p>{{ _("Forms you build here are placed on pages; what visitors send is kept here, can be downloaded as a CSV file, and is mailed to the addresses you choose. Open a form to change its questions.") }}</p>
{% set forms = m.search(cat="form", sort="title", pagelen=100) %}
<table>
  <thead><tr><th scope="col">{{ _("Form") }}</th><th scope="col">{{ _("In templates") }}</th><th scope="col">{{ _("Answers") }}</th></tr></thead>
  <tbody>
  {% for form in forms %}
    <tr>
      <td class="title"><a href="/admin/edit/{{ form.id }}">{{ form.title or form.name }}</a></td>
      <td data-label="{{ _("In templates") }}">{% if form.name is startingwith("form_") %}<code>m.forms("{{ form.name[5:] }}")</code>{% else %}<a href="{{ form.page_url }}">{{ _("its own page") }}</a>{% endif %}</td>
      <td data-label="{{ _("Answers") }}"><a href="/admin/forms?form={{ form.id }}">{{ _("Read the answers") }}</a></td>
    </tr>
  {% else %}
    <tr><td colspan="3"><p class="empty">{{ _("No forms yet: make the first one below.") }}</p></td></tr>
  {% endfor %}
  </tbody>
</table>
<form id="new-form" class="stacked">
  <h2>{{ _("New form") }}</h2>
  <label>{{ _("Name") }} <input name="name" required pattern="[a-z][a-z0-9_]*" maxlength="60" aria-describedby="new-form-help"></label>
  <label>{{ _("Title") }} <input name="title" required maxlength="200"></label>
  <button type="submit" class="primary">{{ _("Make the form") }}</button>
  <small id="new-form-help">{{ _("The name templates use: a-z, 0-9 and _, e.g.") }} <code>signup</code>.</small>
</form>
<p id="new-form-status" class="message" role="status" aria-live="polite"></p>
{% endif %}
{% endblock %}
{% block scripts %}{{ lib("js/admin-forms.js") }}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}Forms{% endblock %}
{% block content %}
{% set chosen = m.rsc[q.form|int] if q.form else none %}
{% if chosen and chosen.is_a("form") %}
<h1>Answers to “{{ chosen.title }}”</h1>
<p><a href="/admin/forms">All forms</a> · <a href="/admin/edit/{{ chosen.id }}">Change the form</a> ·
   <a class="button" href="/api/forms/{{ chosen.id }}/submissions.csv" download>Download as CSV</a></p>
<p id="answers-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap" id="answers" data-form="{{ chosen.id }}">
<table id="answers-table">
  <thead><tr></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="answers-empty" class="empty" hidden>No answers yet.</p>
<p><button type="button" id="answers-more" hidden>Older answers</button></p>
{% else %}
<h1>Forms</h1>
<p>Forms you build here are placed on pages; what visitors send is kept here, can be downloaded
as a CSV file, and is mailed to the addresses you choose. Open a form to change its questions.</p>
{% set forms = m.search(cat="form", sort="title", pagelen=100) %}
<table>
  <thead><tr><th scope="col">Form</th><th scope="col">In templates</th><th scope="col">Answers</th></tr></thead>
  <tbody>
  {% for form in forms %}
    <tr>
      <td class="title"><a href="/admin/edit/{{ form.id }}">{{ form.title or form.name }}</a></td>
      <td data-label="In templates">{% if form.name is startingwith("form_") %}<code>m.forms("{{ form.name[5:] }}")</code>{% else %}<a href="{{ form.page_url }}">its own page</a>{% endif %}</td>
      <td data-label="Answers"><a href="/admin/forms?form={{ form.id }}">Read the answers</a></td>
    </tr>
  {% else %}
    <tr><td colspan="3"><p class="empty">No forms yet: make the first one below.</p></td></tr>
  {% endfor %}
  </tbody>
</table>
<form id="new-form" class="stacked">
  <h2>New form</h2>
  <label>Name <input name="name" required pattern="[a-z][a-z0-9_]*" maxlength="60" aria-describedby="new-form-help"></label>
  <label>Title <input name="title" required maxlength="200"></label>
  <button type="submit" class="primary">Make the form</button>
  <small id="new-form-help">The name templates use: a-z, 0-9 and _, e.g. <code>signup</code>.</small>
</form>
<p id="new-form-status" class="message" role="status" aria-live="polite"></p>
{% endif %}
{% endblock %}
{% block scripts %}{{ lib("js/admin-forms.js") }}{% endblock %}

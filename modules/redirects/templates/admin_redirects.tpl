{% extends "admin_base.tpl" %}
{% block title %}{{ _("Redirects") }}{% endblock %}
{% block content %}
<h1>{{ _("Redirects") }}</h1>
<p>{{ _('When a page moves, its old address can send visitors and search engines on to the new one, instead of a "not found". A rule is used only for an address that finds nothing else, so a page that exists is never redirected.') }} {{ _("A page's own address with an old slug") }}
(<code>/page/12/old-title</code>) {{ _("moves to its page by itself.") }}</p>
<p id="redirects-status" class="message" role="status" aria-live="polite"></p>
<form id="new-redirect" class="stacked">
  <h2>{{ _("New redirect") }}</h2>
  <label>{{ _("Old address") }} <input name="from" required placeholder="/2019/05/old-post/" maxlength="2000"></label>
  <label>{{ _("New address") }} <input name="to" placeholder="{{ _("/page/12 or https://…") }}" maxlength="2000" aria-describedby="to-help"></label>
  <label>{{ _("Answer") }}
    <select name="status">
      <option value="301">{{ _("301: moved for good") }}</option>
      <option value="302">{{ _("302: moved for now") }}</option>
      <option value="410">{{ _("410: gone for good") }}</option>
    </select>
  </label>
  <button type="submit" class="primary">{{ _("Add the redirect") }}</button>
  <small id="to-help">{{ _("Empty with 410: the page is gone and nothing replaces it.") }}</small>
</form>
<div class="table-wrap">
<table id="redirects">
  <thead><tr><th scope="col">{{ _("Old address") }}</th><th scope="col">{{ _("Goes to") }}</th><th scope="col">{{ _("Answer") }}</th><th scope="col">{{ _("Hits") }}</th><th scope="col">{{ _("Last hit") }}</th><th scope="col"><span class="visually-hidden">{{ _("Remove") }}</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="redirects-empty" class="empty" hidden>{{ _("No redirects yet.") }}</p>
<form id="import-redirects" class="stacked">
  <h2>{{ _("Import from CSV") }}</h2>
  <label>{{ _("A CSV file") }} <input type="file" name="file" accept=".csv,text/csv" aria-describedby="csv-help"></label>
  <button type="submit">{{ _("Import") }}</button>
  <small id="csv-help">{{ _("One rule a line:") }} <code>old,new,status</code> {{ _("(a first line") }}
    <code>from,to,status</code> {{ _("is skipped).") }} {{ _("All of them are added, or, if a line is wrong, none, and each wrong line is named.") }}</small>
</form>
{% endblock %}
{% block scripts %}{{ lib("js/admin-redirects.js") }}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}Redirects{% endblock %}
{% block content %}
<h1>Redirects</h1>
<p>When a page moves, its old address can send visitors and search engines on to the new one,
instead of a "not found". A rule is used only for an address that finds nothing else, so a
page that exists is never redirected. A page's own address with an old slug
(<code>/page/12/old-title</code>) moves to its page by itself.</p>
<p id="redirects-status" class="message" role="status" aria-live="polite"></p>
<form id="new-redirect" class="stacked">
  <h2>New redirect</h2>
  <label>Old address <input name="from" required placeholder="/2019/05/old-post/" maxlength="2000"></label>
  <label>New address <input name="to" placeholder="/page/12 or https://…" maxlength="2000" aria-describedby="to-help"></label>
  <label>Answer
    <select name="status">
      <option value="301">301: moved for good</option>
      <option value="302">302: moved for now</option>
      <option value="410">410: gone for good</option>
    </select>
  </label>
  <button type="submit" class="primary">Add the redirect</button>
  <small id="to-help">Empty with 410: the page is gone and nothing replaces it.</small>
</form>
<div class="table-wrap">
<table id="redirects">
  <thead><tr><th scope="col">Old address</th><th scope="col">Goes to</th><th scope="col">Answer</th><th scope="col">Hits</th><th scope="col">Last hit</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="redirects-empty" class="empty" hidden>No redirects yet.</p>
<form id="import-redirects" class="stacked">
  <h2>Import from CSV</h2>
  <label>A CSV file <input type="file" name="file" accept=".csv,text/csv" aria-describedby="csv-help"></label>
  <button type="submit">Import</button>
  <small id="csv-help">One rule a line: <code>old,new,status</code> (a first line
    <code>from,to,status</code> is skipped). All of them are added, or, if a line is wrong,
    none, and each wrong line is named.</small>
</form>
{% endblock %}
{% block scripts %}{{ lib("js/admin-redirects.js") }}{% endblock %}

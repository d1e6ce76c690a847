{% extends "admin_base.tpl" %}
{% block title %}Import{% endblock %}
{% block content %}
<h1>Import a WordPress site</h1>
<p>Bring a WordPress site in whole: in WordPress, choose <strong>Tools › Export › All content</strong>
and upload the file it gives you here. Posts, pages, authors, categories and tags, comments, custom
fields and menus come over, and every old address redirects to its new page. Importing the same file
again changes only what changed. Only administrators import. For a large site, or with a copy of
<code>wp-content/uploads</code>, use <code>bulwark import wordpress</code> on the server
(see <code>docs/import.md</code>).</p>
<form id="import-form" class="stacked" data-user="{{ request.user_id }}">
  <label>The export file <input name="file" type="file" accept=".xml,application/xml,text/xml" required></label>
  <label class="check"><input type="checkbox" name="fetch_media" value="on"> <span>Fetch the pictures and other files from the old site <small>(it must still be online)</small></span></label>
  <label class="check"><input type="checkbox" name="users" value="on"> <span>Give each author an account as an editor <small>(without a password: they choose theirs with “Forgot your password?”)</small></span></label>
  <button type="submit" class="primary">Import</button>
</form>
<p id="import-status" class="message" role="status" aria-live="polite"></p>
<section id="import-progress" hidden aria-labelledby="import-progress-title">
  <h2 id="import-progress-title">Importing</h2>
  <p><label for="import-bar" id="import-stage">Starting</label></p>
  <progress id="import-bar" max="1" value="0"></progress>
</section>
<section id="import-report" hidden aria-labelledby="import-report-title">
  <h2 id="import-report-title">Report</h2>
  <div class="table-wrap">
  <table id="import-counts">
    <thead><tr><th scope="col">What</th><th scope="col">Imported</th><th scope="col">Updated</th><th scope="col">Unchanged</th><th scope="col">Skipped</th></tr></thead>
    <tbody></tbody>
  </table>
  </div>
  <div id="import-skipped" hidden><h3>Skipped</h3><ul></ul></div>
  <div id="import-notes" hidden><h3>To look at</h3><ul></ul></div>
  <div id="import-shortcodes" hidden><h3>Shortcodes kept as text</h3>
    <p>Plugins' shortcodes have no meaning here; these posts show them as written. Replace them
    (a <a href="/admin/forms">form</a> for a contact form).</p><ul></ul></div>
</section>
{% endblock %}
{% block scripts %}{% if "push" in site_modules %}{{ lib("js/bulwark.js") }}{% endif %}{{ lib("js/admin-import.js") }}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}{{ _("Import") }}{% endblock %}
{% block content %}
<h1>{{ _("Import a WordPress site") }}</h1>
<p>{{ _("Bring a WordPress site in whole: in WordPress, choose") }} <strong>{{ _("Tools › Export › All content") }}</strong>
{{ _("and upload the file it gives you here.") }} {{ _("Posts, pages, authors, categories and tags, comments, custom fields and menus come over, and every old address redirects to its new page. Importing the same file again changes only what changed. Only administrators import.") }} {{ _("For a large site, or with a copy of") }}
<code>wp-content/uploads</code>{{ _(", use") }} <code>bulwark import wordpress</code> {{ _("on the server (see") }} <code>docs/import.md</code>).</p>
<form id="import-form" class="stacked" data-user="{{ request.user_id }}">
  <label>{{ _("The export file") }} <input name="file" type="file" accept=".xml,application/xml,text/xml" required></label>
  <label class="check"><input type="checkbox" name="fetch_media" value="on"> <span>{{ _("Fetch the pictures and other files from the old site") }} <small>{{ _("(it must still be online)") }}</small></span></label>
  <label class="check"><input type="checkbox" name="users" value="on"> <span>{{ _("Give each author an account as an author (they write and change their own articles)") }} <small>{{ _("(without a password: they choose theirs with “Forgot your password?”)") }}</small></span></label>
  <label class="check"><input type="checkbox" name="invite" value="on"> <span>{{ _("Mail each new account a link to choose its password") }} <small>{{ _("(it works for a week; without it, authors use “Forgot your password?”)") }}</small></span></label>
  <button type="submit" class="primary">{{ _("Import") }}</button>
</form>
<p id="import-status" class="message" role="status" aria-live="polite"></p>
<section id="import-progress" hidden aria-labelledby="import-progress-title">
  <h2 id="import-progress-title">{{ _("Importing") }}</h2>
  <p><label for="import-bar" id="import-stage">{{ _("Starting") }}</label></p>
  <progress id="import-bar" max="1" value="0"></progress>
</section>
<section id="import-report" hidden aria-labelledby="import-report-title">
  <h2 id="import-report-title">{{ _("Report") }}</h2>
  <div class="table-wrap">
  <table id="import-counts">
    <thead><tr><th scope="col">{{ _("What") }}</th><th scope="col">{{ _("Imported") }}</th><th scope="col">{{ _("Updated") }}</th><th scope="col">{{ _("Unchanged") }}</th><th scope="col">{{ _("Skipped") }}</th></tr></thead>
    <tbody></tbody>
  </table>
  </div>
  <div id="import-skipped" hidden><h3>{{ _("Skipped") }}</h3><ul></ul></div>
  <div id="import-notes" hidden><h3>{{ _("To look at") }}</h3><ul></ul></div>
  <div id="import-shortcodes" hidden><h3>{{ _("Shortcodes kept as text") }}</h3>
    <p>{{ _("Plugins' shortcodes have no meaning here; these posts show them as written. Replace them (a") }} <a href="/admin/forms">{{ _("form") }}</a> {{ _("for a contact form).") }}</p><ul></ul></div>
</section>
{% endblock %}
{% block scripts %}{% if "push" in site_modules %}{{ lib("js/bulwark.js") }}{% endif %}{{ lib("js/admin-import.js") }}{% endblock %}

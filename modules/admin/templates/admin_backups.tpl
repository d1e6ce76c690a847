{% extends "admin_base.tpl" %}
{% block title %}Backups{% endblock %}
{% block content %}
<h1>Backups</h1>
<p>A backup is one archive of the site's whole database (pages, people,
password hashes, sessions) and its uploaded files, taken while the site goes
on serving. Backups are kept in the site's <code>data/backups/</code>: made
here, with <code>bulwark backup</code>, and on the schedule in
<code>site.toml</code>. Restoring puts everything back as it was then, at
once; what changed since is gone.</p>
<p><button type="button" id="make-backup">Make a backup now</button></p>
<p id="backups-status" class="message" role="status" aria-live="polite"></p>
<div class="scroll">
<table>
  <thead><tr><th scope="col">Backup (download)</th><th scope="col" class="wide">Made</th><th scope="col">Size</th><th scope="col"><span class="visually-hidden">Restore</span></th></tr></thead>
  <tbody id="backup-list" data-site="{{ site_name }}"><tr><td colspan="4">Loading…</td></tr></tbody>
</table>
</div>
<dialog id="restore-dialog" aria-labelledby="restore-title">
  <form method="dialog">
    <h2 id="restore-title">Restore <span class="backup-name"></span>?</h2>
    <p>Everything in the site's database is replaced by this backup. Changes made
    since it was made are lost, and people logged on since then must log on again.</p>
    <label>Type the site's name, <strong>{{ site_name }}</strong>, to confirm
      <input name="confirm" autocomplete="off" required></label>
    <p class="message" role="status"></p>
    <p><button type="submit" value="restore">Restore</button> <button type="submit" value="cancel" formnovalidate>Cancel</button></p>
  </form>
</dialog>
{% endblock %}

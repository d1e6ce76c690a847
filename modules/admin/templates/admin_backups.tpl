{% extends "admin_base.tpl" %}
{% block title %}{{ _("Backups") }}{% endblock %}
{% block content %}
<h1>{{ _("Backups") }}</h1>
<p>{{ _("A backup is one archive of the site's whole database (pages, people, password hashes, sessions) and its uploaded files, taken while the site goes on serving.") }}
{{ _("Backups are kept in the site's") }} <code>data/backups/</code>: {{ _("made here, with") }} <code>bulwark backup</code>, {{ _("and on the schedule in") }}
<code>site.toml</code>. {{ _("Restoring puts everything back as it was then, at once; what changed since is gone.") }}</p>
<p><button type="button" id="make-backup">{{ _("Make a backup now") }}</button></p>
<p id="backups-status" class="message" role="status" aria-live="polite"></p>
<div class="scroll">
<table>
  <thead><tr><th scope="col">{{ _("Backup (download)") }}</th><th scope="col" class="wide">{{ _("Made") }}</th><th scope="col">{{ _("Size") }}</th><th scope="col"><span class="visually-hidden">{{ _("Restore") }}</span></th></tr></thead>
  <tbody id="backup-list" data-site="{{ site_name }}"><tr><td colspan="4">{{ _("Loading…") }}</td></tr></tbody>
</table>
</div>
<dialog id="restore-dialog" aria-labelledby="restore-title">
  <form method="dialog">
    <h2 id="restore-title">{{ _("Restore") }} <span class="backup-name"></span>?</h2>
    <p>{{ _("Everything in the site's database is replaced by this backup. Changes made since it was made are lost, and people logged on since then must log on again.") }}</p>
    <label>{{ _("Type the site's name,") }} <strong>{{ site_name }}</strong>, {{ _("to confirm") }}
      <input name="confirm" autocomplete="off" required></label>
    <p class="message" role="status"></p>
    <p><button type="submit" value="restore">{{ _("Restore") }}</button> <button type="submit" value="cancel" formnovalidate>{{ _("Cancel") }}</button></p>
  </form>
</dialog>
{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}Modules{% endblock %}
{% block content %}
<h1>Modules</h1>
<p>What this site runs, of the modules this Bulwark has. Saving writes the
list into the site's <code>site.toml</code> (the rest of the file stays as it
is) and loads the site again at once: pages being served finish as they were,
the next ones see the change. A list the site cannot load with (a module
without one it needs) changes nothing. <code>core</code> is always on;
<code>auth</code> and <code>admin</code> are turned off in <code>site.toml</code>
only, since this screen runs on them.</p>
<p id="modules-status" class="message" role="status" aria-live="polite"></p>
<form id="modules">
  <fieldset>
    <legend>Enabled modules</legend>
    <ul id="module-list" class="plain"></ul>
  </fieldset>
  <p><button type="submit">Save and reload the site</button></p>
</form>
{% endblock %}

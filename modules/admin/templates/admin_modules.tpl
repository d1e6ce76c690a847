{% extends "admin_base.tpl" %}
{% block title %}{{ _("Modules") }}{% endblock %}
{% block content %}
<h1>{{ _("Modules") }}</h1>
<p>{{ _("What this site runs, of the modules this Bulwark has. Saving writes the list into the site's") }} <code>site.toml</code>
{{ _("(the rest of the file stays as it is) and loads the site again at once: pages being served finish as they were, the next ones see the change. A list the site cannot load with (a module without one it needs) changes nothing.") }}
<code>core</code> {{ _("is always on;") }}
<code>auth</code> {{ _("and") }} <code>admin</code> {{ _("are turned off in") }} <code>site.toml</code>
{{ _("only, since this screen runs on them.") }}</p>
<p id="modules-status" class="message" role="status" aria-live="polite"></p>
<form id="modules">
  <fieldset>
    <legend>{{ _("Enabled modules") }}</legend>
    <ul id="module-list" class="plain"></ul>
  </fieldset>
  <p><button type="submit">{{ _("Save and reload the site") }}</button></p>
</form>
{% endblock %}

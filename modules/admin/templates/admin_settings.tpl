{% extends "admin_base.tpl" %}
{% block title %}{{ _("Settings") }}{% endblock %}
{% block content %}
<h1>{{ _("Settings") }}</h1>
<p>{{ _("The site's settings kept in its database, which templates read as") }}
<code>m.config.&lt;key&gt;</code> ({{ _("the admin's title is") }} <code>site_title</code>).
{{ _("A change shows at once on every page that reads it. Keys with a dot belong to a part of Bulwark and are changed on its own screen.") }}</p>
<p id="settings-status" class="message" role="status" aria-live="polite"></p>
<div id="settings-list" data-loading="1"></div>

<h2>{{ _("New setting") }}</h2>
<form id="new-setting" class="stacked">
  <label>{{ _("Key") }} <input name="key" required pattern="[a-z0-9_\-]+" title="{{ _("a-z, 0-9, _ and -") }}" maxlength="120"></label>
  <label>{{ _("Value") }} <input name="value"></label>
  <button type="submit">{{ _("Add the setting") }}</button>
</form>

<h2>{{ _("Modules") }}</h2>
<p>{{ _("This site runs:") }} {% for name in site_modules %}<code>{{ name }}</code>{% if not loop.last %}, {% endif %}{% endfor %}.
{% if "administrators" in my_groups %}<a href="/admin/modules">{{ _("Turn modules on or off") }}</a>.{% else %}{{ _("Administrators turn them on or off.") }}{% endif %}</p>
{% endblock %}

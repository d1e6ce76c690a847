{% extends "admin_base.tpl" %}
{% block title %}{{ _("Cache") }}{% endblock %}
{% block content %}
<h1>{{ _("Cache") }}</h1>
<p>{{ _("Bulwark drops cached pages by itself when the data they show changes. Purge by hand what it cannot know about: a template or file changed on disk, data from elsewhere, or to see a page rendered now.") }}</p>
<p id="cache-status" class="message" role="status" aria-live="polite"></p>
<form id="purge-url" class="stacked">
  <h2>{{ _("One page") }}</h2>
  <label>{{ _("Path") }} <input name="url" required placeholder="/about" pattern="/.*" title="{{ _("a path on this site, starting with /") }}"></label>
  <button type="submit">{{ _("Purge this page") }}</button>
</form>
<form id="purge-resource" class="stacked">
  <h2>{{ _("Everything that shows a resource") }}</h2>
  <label>{{ _("Resource id") }} <input name="resource" type="number" min="1" required></label>
  <button type="submit">{{ _("Purge what shows it") }}</button>
</form>
<form id="purge-all" class="stacked">
  <h2>{{ _("The whole site") }}</h2>
  <p>{{ _("Every cached page, fragment and value; the next requests all render.") }}</p>
  <button type="submit">{{ _("Flush the site's caches") }}</button>
</form>
{% endblock %}

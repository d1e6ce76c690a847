{% extends "admin_base.tpl" %}
{% block title %}Cache{% endblock %}
{% block content %}
<h1>Cache</h1>
<p>Bulwark drops cached pages by itself when the data they show changes. Purge
by hand what it cannot know about: a template or file changed on disk, data
from elsewhere, or to see a page rendered now.</p>
<p id="cache-status" class="message" role="status" aria-live="polite"></p>
<form id="purge-url" class="stacked">
  <h2>One page</h2>
  <label>Path <input name="url" required placeholder="/about" pattern="/.*" title="a path on this site, starting with /"></label>
  <button type="submit">Purge this page</button>
</form>
<form id="purge-resource" class="stacked">
  <h2>Everything that shows a resource</h2>
  <label>Resource id <input name="resource" type="number" min="1" required></label>
  <button type="submit">Purge what shows it</button>
</form>
<form id="purge-all" class="stacked">
  <h2>The whole site</h2>
  <p>Every cached page, fragment and value; the next requests all render.</p>
  <button type="submit">Flush the site's caches</button>
</form>
{% endblock %}

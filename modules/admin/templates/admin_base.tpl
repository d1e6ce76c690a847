{# The frame of every admin screen: a site may override this file (or any
   admin_*.tpl) to change the admin's look. The navigation is in two parts:
   the content (the admin's own screens and those modules bring), and the
   site's machinery. #}
<!doctype html>
<html lang="{{ request.language }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
{% if request.csrf_token %}<meta name="csrf-token" content="{{ request.csrf_token }}">{% endif %}
<title>{% block title %}{{ _("Admin") }}{% endblock %} &middot; {{ m.config.site_title or "Bulwark" }}</title>
{{ lib("css/admin.css") }}
</head>
<body class="admin">
<a class="skip" href="#main">{{ _("Skip to the content") }}</a>
{% set machinery = ["/admin/categories", "/admin/predicates", "/admin/users", "/admin/rules", "/admin/settings", "/admin/cache", "/admin/modules", "/admin/backups"] %}
<div class="frame">
  <div class="topbar">
    <a href="/admin">{{ _("{site} admin", site=m.config.site_title or "Bulwark") }}</a>
    <button type="button" id="nav-toggle" aria-expanded="false" aria-controls="sidenav" hidden>{{ _("Menu") }}</button>
  </div>
  <nav id="sidenav" class="sidenav" aria-label="{{ _("Admin") }}">
    <a class="brand" href="/admin">{{ m.config.site_title or "Bulwark" }}<small>{{ _("Admin") }}</small></a>
    <ul>
    {% for item in menu if not item.parent and item.url not in machinery %}
      <li><a href="{{ item.url }}"{% if item.url == request.path %} aria-current="page"{% endif %}>{{ _(item.label) }}</a></li>
    {% endfor %}
    </ul>
    {% for item in menu if not item.parent and item.url in machinery %}
    {% if loop.first %}<h2 id="nav-site">{{ _("Site") }}</h2>
    <ul aria-labelledby="nav-site">{% endif %}
      <li><a href="{{ item.url }}"{% if item.url == request.path %} aria-current="page"{% endif %}>{{ _(item.label) }}</a></li>
    {% if loop.last %}</ul>{% endif %}
    {% endfor %}
    <h2 id="nav-you">{{ _("You") }}</h2>
    <ul aria-labelledby="nav-you">
      <li><a href="/logon/account">{{ _("Your account") }}</a></li>
      <li><a href="/">{{ _("View the site") }}</a></li>
      <li><a href="/logoff">{{ _("Log off") }}</a></li>
    </ul>
  </nav>
  <main id="main" tabindex="-1">
  {% block content %}{% endblock %}
  </main>
</div>
{# Toasts echo, for the eye, what a screen says in its own status line (read out there). #}
<div id="toasts" class="toasts" aria-hidden="true"></div>
{{ script_texts() }}
{{ lib("js/texts.js", "js/admin.js") }}
{% block scripts %}{% endblock %}
</body>
</html>

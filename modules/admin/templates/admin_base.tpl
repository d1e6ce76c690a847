{# The frame of every admin screen: a site may override this file (or any
   admin_*.tpl) to change the admin's look. #}
<!doctype html>
<html lang="{{ request.language }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
{% if request.csrf_token %}<meta name="csrf-token" content="{{ request.csrf_token }}">{% endif %}
<title>{% block title %}Admin{% endblock %} &middot; {{ m.config.site_title or "Bulwark" }}</title>
{{ lib("css/admin.css") }}
</head>
<body class="admin">
<header>
  <a href="/admin"><strong>Admin</strong></a>
  <nav aria-label="Admin">
    <ul>
    {% for item in menu if not item.parent %}
      <li><a href="{{ item.url }}"{% if item.url == request.path %} aria-current="page"{% endif %}>{{ item.label }}</a></li>
    {% endfor %}
    </ul>
  </nav>
  <a href="/">View the site</a>
  <a href="/logoff">Log off</a>
</header>
<main>
{% block content %}{% endblock %}
</main>
{{ lib("js/admin.js") }}
{% block scripts %}{% endblock %}
</body>
</html>

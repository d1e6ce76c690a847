<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}{{ site.settings.title }}{% endblock %}</title>
<link rel="icon" type="image/svg+xml" href="{{ lib("images/favicon.svg") }}">
{{ lib("css/bulwark.css", "css/site.css") }}
{% block head %}{% endblock %}
</head>
<body{% if rsc is defined and rsc %} data-resource="{{ rsc.id }}"{% endif %}>
{% if request.viewing_as %}<p class="viewing-as" role="status">Viewing the site as the group <strong>{{ request.viewing_as }}</strong>. <a href="/admin/rules#view-as">Back to your own view</a></p>{% endif %}
<header class="top">
  <div class="wrap">
    <a class="brand" href="{{ url('home') }}">{{ site.settings.title }}</a>
    <button type="button" class="nav-toggle" aria-expanded="false" aria-controls="site-nav" hidden>Menu</button>
    {# The main menu, edited in the admin (Menus); two levels shown. #}
    <nav id="site-nav" aria-label="Main">
      <ul>
      {% for item in m.menu("main") %}
        <li><a href="{{ item.url }}"{% if request.path == item.url %} aria-current="page"{% endif %}>{{ item.title }}</a>
        {% if item.children %}<ul>{% for child in item.children %}<li><a href="{{ child.url }}"{% if request.path == child.url %} aria-current="page"{% endif %}>{{ child.title }}</a></li>{% endfor %}</ul>{% endif %}
        </li>
      {% endfor %}
        <li>{% if request.user_id %}<a href="/logoff">Log off</a>{% else %}<a href="/logon">Log on</a>{% endif %}</li>
      </ul>
    </nav>
  </div>
</header>
<main class="wrap">
{% block content %}{% endblock %}
</main>
<footer class="wrap foot">
  <p>{{ site.settings.tagline }} &middot; Served by Bulwark.</p>
</footer>
{{ lib("js/site-nav.js", "js/new-since.js", "js/edit-link.js") }}
</body>
</html>

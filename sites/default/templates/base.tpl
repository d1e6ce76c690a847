<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}{{ site.settings.title }}{% endblock %}</title>
{{ lib("css/bulwark.css", "css/site.css") }}
{% block head %}{% endblock %}
</head>
<body{% if rsc is defined and rsc %} data-resource="{{ rsc.id }}"{% endif %}>
{% if request.viewing_as %}<p class="viewing-as" role="status">Viewing the site as the group <strong>{{ request.viewing_as }}</strong>. <a href="/admin/rules#view-as">Back to your own view</a></p>{% endif %}
<header class="top">
  <div class="wrap">
    <a class="brand" href="{{ url('home') }}">{{ site.settings.title }}</a>
    <nav>
      {% for rule, label in [("home", "Home"), ("articles", "Articles"), ("features", "Features"), ("live", "Live"), ("about", "About"), ("contact", "Contact")] %}
      <a href="{{ url(rule) }}"{% if request.path == url(rule) %} aria-current="page"{% endif %}>{{ label }}</a>
      {% endfor %}
      {% if request.user_id %}<a href="/logoff">Log off</a>{% else %}<a href="/logon">Log on</a>{% endif %}
    </nav>
  </div>
</header>
<main class="wrap">
{% block content %}{% endblock %}
</main>
<footer class="wrap foot">
  <p>{{ site.settings.tagline }} &middot; Served by Bulwark.</p>
</footer>
{{ lib("js/edit-link.js") }}
</body>
</html>

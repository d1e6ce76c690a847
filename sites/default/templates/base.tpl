<!doctype html>
<html lang="{{ m.req.language }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}{{ site.settings.title }}{% endblock %}</title>
<link rel="icon" type="image/svg+xml" href="{{ lib("images/favicon.svg") }}">
{% block canonical %}{{ canonical_link() }}{% endblock %}
{% block alternates %}{{ alternate_links() }}{% endblock %}
{% include "_feed_links.tpl" ignore missing %}
{% include "_comments_feed_links.tpl" ignore missing %}
{{ lib("css/bulwark.css", "css/site.css") }}
{% block head %}{% endblock %}
</head>
<body{% if rsc is defined and rsc %} data-resource="{{ rsc.id }}"{% endif %}>
{% if request.viewing_as %}<p class="viewing-as" role="status">{{ _("Viewing the site as the group") }} <strong>{{ request.viewing_as }}</strong>. <a href="/admin/rules#view-as">{{ _("Back to your own view") }}</a></p>{% endif %}
<header class="top">
  <div class="wrap">
    <a class="brand" href="{{ url('home') }}">{{ site.settings.title }}</a>
    {# On a phone the navigation is folded from the first paint (CSS): this
       opens it, as a link to it without scripts, as a button with them. #}
    <a class="nav-toggle" href="#site-nav" aria-controls="site-nav" aria-expanded="false">{{ _("Menu") }}</a>
    {# The main menu, edited in the admin (Menus); two levels shown. #}
    <nav id="site-nav" aria-label="{{ _("Main") }}">
      <ul>
      {% for item in m.menu("main") %}
        <li><a href="{{ item.url }}"{% if request.path == item.url %} aria-current="page"{% endif %}>{{ _(item.title) }}</a>
        {% if item.children %}<ul>{% for child in item.children %}<li><a href="{{ child.url }}"{% if request.path == child.url %} aria-current="page"{% endif %}>{{ _(child.title) }}</a></li>{% endfor %}</ul>{% endif %}
        </li>
      {% endfor %}
        {% set search = url('search') %}<li><a href="{{ search }}"{% if request.path == search %} aria-current="page"{% endif %}>{{ _("Search") }}</a></li>
        <li>{% if request.user_id %}<a href="/logoff">{{ _("Log off") }}</a>{% else %}<a href="/logon">{{ _("Log on") }}</a>{% endif %}</li>
      </ul>
    </nav>
    {# The same page in the site's other languages. #}
    {% if request.alternates %}
    {% set names = {"en": "English", "nl": "Nederlands"} %}
    <nav class="languages" aria-label="{{ _("Language") }}">
      <ul>
      {% for a in request.alternates %}
        <li><a href="{{ a.url }}" hreflang="{{ a.language }}" lang="{{ a.language }}"{% if a.language == m.req.language %} aria-current="true"{% endif %}>{{ names[a.language] or a.language|upper }}</a></li>
      {% endfor %}
      </ul>
    </nav>
    {% endif %}
  </div>
</header>
<main class="wrap">
{% block content %}{% endblock %}
</main>
<footer class="wrap foot">
  <p>{{ _(site.settings.tagline) }} &middot; {{ _("Served by Bulwark.") }}</p>
</footer>
{{ script_texts("js/edit-link.js") }}
{{ lib("js/texts.js", "js/site-nav.js", "js/new-since.js", "js/edit-link.js") }}
</body>
</html>

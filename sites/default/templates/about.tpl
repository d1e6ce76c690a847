{% extends "base.tpl" %}
{% block title %}About &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>About</h1>
<p>Bulwark is a content management system and web framework in one program. It
serves dynamic pages, static files and push connections from one process, keeps
what it rendered in a dependency-checked cache, and answers <em>503</em> instead of
falling over when a link from a very large site sends everyone at once.</p>
<p>Its design follows Zotonic: templates pull the data they need from models, and
every read is remembered so a change invalidates exactly the pages that showed it.</p>
{% endblock %}

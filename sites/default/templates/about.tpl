{% extends "base.tpl" %}
{% block title %}{{ _("About") }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("About") }}</h1>
<p>{{ _("Bulwark is a content management system and web framework in one program. It serves dynamic pages, static files and push connections from one process, keeps what it rendered in a dependency-checked cache, and answers 503 instead of falling over when a link from a very large site sends everyone at once.") }}</p>
<p>{{ _("Its design follows Zotonic: templates pull the data they need from models, and every read is remembered so a change invalidates exactly the pages that showed it.") }}</p>
{% endblock %}

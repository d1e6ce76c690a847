{# The accounts pages (logon, logoff, sessions) in the site's own frame. #}
{% extends "base.tpl" %}
{% block head %}<meta name="robots" content="noindex">{% endblock %}

{% extends "base.tpl" %}
{% block title %}{{ _("Live board") }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("Live board") }}</h1>
<p class="lead">{{ _("Whatever is posted here appears in every open browser at once, pushed over WebSocket (or Server-Sent Events, or long-poll when nothing else gets through).") }}</p>
<form id="post" class="form inline">
  <input name="text" maxlength="200" required placeholder="{{ _("Say something") }}" aria-label="{{ _("Say something") }}" autocomplete="off">
  <button class="button" type="submit">{{ _("Post") }}</button>
</form>
<p class="hint" id="push-state">{{ _("connecting…") }}</p>
<ul id="board" class="board"></ul>
{{ lib("js/bulwark.js", "js/live.js") }}
{% endblock %}

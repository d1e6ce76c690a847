{% extends "admin_base.tpl" %}
{% block title %}{{ _("Comments") }}{% endblock %}
{% block content %}
{% set status = q.status if q.status in ["pending", "approved", "spam", "deleted"] else "pending" %}
<h1>{{ _("Comments") }}</h1>
<p>{{ _("What visitors wrote under your pages. Comments that wait are shown nowhere until you approve them; the site's rule") }}
(<code>[comments] moderation</code>) {{ _("says which wait. Spam and deleted comments are kept here, in case one was a mistake.") }}</p>
<nav class="tabs" aria-label="{{ _("Comments by status") }}">
  {% for s, label in [["pending", N_("Waiting")], ["approved", N_("Approved")], ["spam", N_("Spam")], ["deleted", N_("Deleted")]] %}
  <a href="/admin/comments?status={{ s }}"{% if s == status %} aria-current="page"{% endif %}>{{ _(label) }} <span class="count" data-count="{{ s }}"></span></a>
  {% endfor %}
</nav>
<form id="comments-bulk" data-status="{{ status }}">
<p class="bulk-actions">
  {% if status != "approved" %}<button type="submit" name="action" value="approved" class="primary">{{ _("Approve selected") }}</button>{% endif %}
  {% if status != "pending" %}<button type="submit" name="action" value="pending">{{ _("Hold selected") }}</button>{% endif %}
  {% if status != "spam" %}<button type="submit" name="action" value="spam">{{ _("Spam") }}</button>{% endif %}
  {% if status != "deleted" %}<button type="submit" name="action" value="deleted" class="danger">{{ _("Delete selected") }}</button>{% endif %}
</p>
<p id="comments-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap">
<table id="comments-list" class="selectable">
  <thead><tr><th scope="col"><input type="checkbox" id="comments-all" aria-label="{{ _("Select all on this page") }}"></th><th scope="col">{{ _("Comment") }}</th><th scope="col">{{ _("By") }}</th><th scope="col">{{ _("On") }}</th><th scope="col">{{ _("Written") }}</th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="comments-empty" class="empty" hidden>{{ _("No comments here.") }}</p>
<p><button type="button" id="comments-more" hidden>{{ _("Older comments") }}</button></p>
</form>
{% endblock %}
{% block scripts %}{{ lib("js/admin-comments.js") }}{% endblock %}

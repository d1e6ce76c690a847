{% extends "admin_base.tpl" %}
{% block title %}Comments{% endblock %}
{% block content %}
{% set status = q.status if q.status in ["pending", "approved", "spam", "deleted"] else "pending" %}
<h1>Comments</h1>
<p>What visitors wrote under your pages. Comments that wait are shown nowhere until you approve
them; the site's rule (<code>[comments] moderation</code>) says which wait. Spam and deleted
comments are kept here, in case one was a mistake.</p>
<nav class="tabs" aria-label="Comments by status">
  {% for s, label in [["pending", "Waiting"], ["approved", "Approved"], ["spam", "Spam"], ["deleted", "Deleted"]] %}
  <a href="/admin/comments?status={{ s }}"{% if s == status %} aria-current="page"{% endif %}>{{ label }} <span class="count" data-count="{{ s }}"></span></a>
  {% endfor %}
</nav>
<form id="comments-bulk" data-status="{{ status }}">
<p class="bulk-actions">
  {% if status != "approved" %}<button type="submit" name="action" value="approved" class="primary">Approve selected</button>{% endif %}
  {% if status != "pending" %}<button type="submit" name="action" value="pending">Hold selected</button>{% endif %}
  {% if status != "spam" %}<button type="submit" name="action" value="spam">Spam</button>{% endif %}
  {% if status != "deleted" %}<button type="submit" name="action" value="deleted" class="danger">Delete selected</button>{% endif %}
</p>
<p id="comments-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap">
<table id="comments-list" class="selectable">
  <thead><tr><th scope="col"><input type="checkbox" id="comments-all" aria-label="Select all on this page"></th><th scope="col">Comment</th><th scope="col">By</th><th scope="col">On</th><th scope="col">Written</th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="comments-empty" class="empty" hidden>No comments here.</p>
<p><button type="button" id="comments-more" hidden>Older comments</button></p>
</form>
{% endblock %}
{% block scripts %}{{ lib("js/admin-comments.js") }}{% endblock %}

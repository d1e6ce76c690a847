{% extends "admin_base.tpl" %}
{% block title %}Webhooks{% endblock %}
{% block content %}
{% if q.endpoint %}
<h1>Messages of a webhook</h1>
<p><a href="/admin/webhooks">All webhooks</a></p>
<p id="deliveries-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap" id="deliveries" data-endpoint="{{ q.endpoint|int }}">
<table id="deliveries-table">
  <thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Last answer</th><th scope="col">Sent</th><th scope="col"><span class="visually-hidden">Send again</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="deliveries-empty" class="empty" hidden>No messages yet.</p>
<p><button type="button" id="deliveries-more" hidden>Older messages</button></p>
{% else %}
<h1>Webhooks</h1>
<p>A webhook tells another system what happens here: a signed <code>POST</code> to its address
for each event it asked for (a page published, a comment posted, a form answered…). Messages
are queued with the change itself and sent in order, retried for a day; nothing is lost when
the receiver is down. Only administrators manage webhooks.</p>
<p id="webhooks-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap">
<table id="webhooks">
  <thead><tr><th scope="col">Address</th><th scope="col">Events</th><th scope="col">Messages</th><th scope="col">On</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="webhooks-empty" class="empty" hidden>No webhooks yet.</p>
<form id="new-webhook" class="stacked">
  <h2>New webhook</h2>
  <label>Address <input name="url" type="url" required placeholder="https://example.org/hooks/bulwark" maxlength="2000"></label>
  <label>Only these categories <input name="categories" placeholder="article, news" aria-describedby="webhook-categories-help"></label>
  <label>Note <input name="description" maxlength="200"></label>
  <fieldset class="events">
    <legend>Events <small>(none chosen: all)</small></legend>
    {% for e in ["resource.created", "resource.changed", "resource.published", "resource.unpublished", "resource.deleted", "comment.posted", "form.submitted", "user.created"] %}
    <label class="check"><input type="checkbox" name="events" value="{{ e }}"> <code>{{ e }}</code></label>
    {% endfor %}
  </fieldset>
  <button type="submit" class="primary">Add the webhook</button>
  <small id="webhook-categories-help">Names of categories, separated by commas; a resource below one counts. Empty: every category.</small>
</form>
{% endif %}
{% endblock %}
{% block scripts %}{{ lib("js/admin-webhooks.js") }}{% endblock %}

{% extends "admin_base.tpl" %}
{% block title %}{{ _("Webhooks") }}{% endblock %}
{% block content %}
{% if q.endpoint %}
<h1>{{ _("Messages of a webhook") }}</h1>
<p><a href="/admin/webhooks">{{ _("All webhooks") }}</a></p>
<p id="deliveries-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap" id="deliveries" data-endpoint="{{ q.endpoint|int }}">
<table id="deliveries-table">
  <thead><tr><th scope="col">{{ _("Event") }}</th><th scope="col">{{ _("State") }}</th><th scope="col">{{ _("Last answer") }}</th><th scope="col">{{ _("Sent") }}</th><th scope="col"><span class="visually-hidden">{{ _("Send again") }}</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="deliveries-empty" class="empty" hidden>{{ _("No messages yet.") }}</p>
<p><button type="button" id="deliveries-more" hidden>{{ _("Older messages") }}</button></p>
{% else %}
<h1>{{ _("Webhooks") }}</h1>
<p>{{ _("A webhook tells another system what happens here: a signed") }} <code>POST</code> {{ _("to its address for each event it asked for (a page published, a comment posted, a form answered…).") }} {{ _("Messages are queued with the change itself and sent in order, retried for a day; nothing is lost when the receiver is down. Only administrators manage webhooks.") }}</p>
<p id="webhooks-status" class="message" role="status" aria-live="polite"></p>
<div class="table-wrap">
<table id="webhooks">
  <thead><tr><th scope="col">{{ _("Address") }}</th><th scope="col">{{ _("Events") }}</th><th scope="col">{{ _("Messages") }}</th><th scope="col">{{ _("On") }}</th><th scope="col"><span class="visually-hidden">{{ _("Actions") }}</span></th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="webhooks-empty" class="empty" hidden>{{ _("No webhooks yet.") }}</p>
<form id="new-webhook" class="stacked">
  <h2>{{ _("New webhook") }}</h2>
  <label>{{ _("Address") }} <input name="url" type="url" required placeholder="https://example.org/hooks/bulwark" maxlength="2000"></label>
  <label>{{ _("Only these categories") }} <input name="categories" placeholder="article, news" aria-describedby="webhook-categories-help"></label>
  <label>{{ _("Note") }} <input name="description" maxlength="200"></label>
  <fieldset class="events">
    <legend>{{ _("Events") }} <small>{{ _("(none chosen: all)") }}</small></legend>
    {% for e in ["resource.created", "resource.changed", "resource.published", "resource.unpublished", "resource.deleted", "comment.posted", "form.submitted", "user.created"] %}
    <label class="check"><input type="checkbox" name="events" value="{{ e }}"> <code>{{ e }}</code></label>
    {% endfor %}
  </fieldset>
  <button type="submit" class="primary">{{ _("Add the webhook") }}</button>
  <small id="webhook-categories-help">{{ _("Names of categories, separated by commas; a resource below one counts. Empty: every category.") }}</small>
</form>
{% endif %}
{% endblock %}
{% block scripts %}{{ lib("js/admin-webhooks.js") }}{% endblock %}

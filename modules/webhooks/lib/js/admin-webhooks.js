// The admin's Webhooks screen: the endpoints through /api/webhooks (admin.js's
// Admin.api), added, turned on and off, removed, each with its secret; and an
// endpoint's messages with their last answer and a button to send one again.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  function cell(content, label) {
    var td = document.createElement("td");
    if (label) td.dataset.label = label;
    if (content instanceof Node) td.appendChild(content); else td.textContent = content;
    return td;
  }
  function button(text, label, className) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    if (label) b.setAttribute("aria-label", label);
    if (className) b.className = className;
    return b;
  }

  var table = document.getElementById("webhooks");
  if (table) {
    var body = table.querySelector("tbody");
    var status = document.getElementById("webhooks-status");
    var empty = document.getElementById("webhooks-empty");
    var load = function () {
      return Admin.api("GET", "/api/webhooks").then(function (answer) {
        body.replaceChildren();
        answer.webhooks.forEach(function (w) {
          var tr = document.createElement("tr");
          var where = document.createElement("div");
          var url = document.createElement("code");
          url.textContent = w.url;
          var secret = document.createElement("details");
          var summary = document.createElement("summary");
          summary.textContent = _("Secret");
          var code = document.createElement("code");
          code.textContent = w.secret;
          secret.append(summary, code);
          where.append(url);
          if (w.description) { var note = document.createElement("small"); note.textContent = " " + w.description; where.append(note); }
          where.append(secret);
          var events = w.events.length ? w.events.join(", ") : _("all");
          if (w.categories.length) events = _("{events} · in {categories}", { events: events, categories: w.categories.join(", ") });
          var log = document.createElement("a");
          log.href = "/admin/webhooks?endpoint=" + w.id;
          log.textContent = _("{waiting} waiting, {failed} failed, {delivered} delivered", { waiting: w.waiting, failed: w.failed, delivered: w.delivered });
          var toggle = document.createElement("input");
          toggle.type = "checkbox";
          toggle.checked = w.active;
          toggle.setAttribute("aria-label", _("Send to {url}", { url: w.url }));
          toggle.addEventListener("change", function () {
            Admin.api("PATCH", "/api/webhooks/" + w.id, { active: toggle.checked })
              .then(function () { Admin.say(status, toggle.checked ? _("Sending to {url}.", { url: w.url }) : _("Not sending to {url} any more.", { url: w.url }), "ok"); })
              .catch(function (e) { toggle.checked = !toggle.checked; Admin.say(status, _("Not changed: {why}", { why: e.message }), "error"); });
          });
          var remove = button(_("Remove"), _("Remove the webhook {url}", { url: w.url }), "danger");
          remove.addEventListener("click", function () {
            if (!window.confirm(_("Remove the webhook {url} and its messages?", { url: w.url }))) return;
            Admin.api("DELETE", "/api/webhooks/" + w.id)
              .then(function () { Admin.say(status, _("Removed {url}.", { url: w.url }), "ok"); return load(); })
              .catch(function (e) { Admin.say(status, _("Not removed: {why}", { why: e.message }), "error"); });
          });
          tr.append(cell(where), cell(events, _("Events")), cell(log, _("Messages")), cell(toggle, _("On")), cell(remove));
          body.appendChild(tr);
        });
        empty.hidden = answer.webhooks.length > 0;
        table.hidden = answer.webhooks.length === 0;
      }).catch(function (e) { Admin.say(status, _("Webhooks not read: {why}", { why: e.message }), "error"); });
    };
    var form = document.getElementById("new-webhook");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var events = Array.prototype.map.call(form.querySelectorAll('input[name="events"]:checked'), function (b) { return b.value; });
      var categories = form.elements.categories.value.split(",").map(function (c) { return c.trim(); }).filter(Boolean);
      Admin.api("POST", "/api/webhooks", {
        url: form.elements.url.value.trim(),
        events: events,
        categories: categories,
        description: form.elements.description.value.trim(),
      })
        .then(function (made) {
          Admin.say(status, _("Added {url}. Its secret is under “Secret”: the receiver checks signatures with it.", { url: made.url }), "ok");
          form.reset();
          return load();
        })
        .catch(function (e) { Admin.say(status, _("Not added: {why}", { why: e.message }), "error"); });
    });
    load();
  }

  var deliveries = document.getElementById("deliveries");
  if (deliveries) {
    var endpoint = deliveries.dataset.endpoint;
    var rows = deliveries.querySelector("tbody");
    var more = document.getElementById("deliveries-more");
    var none = document.getElementById("deliveries-empty");
    var said = document.getElementById("deliveries-status");
    var oldest = null;
    var PAGE = 50;
    var states = { pending: _("waiting"), delivered: _("delivered"), failed: _("given up") };
    var show = function (before) {
      var url = "/api/webhooks/" + endpoint + "/deliveries?limit=" + PAGE + (before ? "&before=" + before : "");
      return Admin.api("GET", url).then(function (answer) {
        if (!before) rows.replaceChildren();
        answer.deliveries.forEach(function (d) {
          var tr = document.createElement("tr");
          var event = document.createElement("code");
          event.textContent = d.event;
          var badge = document.createElement("span");
          badge.className = "badge " + (d.state === "delivered" ? "published" : d.state === "failed" ? "draft" : "scheduled");
          badge.textContent = states[d.state] + (d.attempts > 1 ? " " + _("({n} tries)", { n: d.attempts }) : "");
          var answerText = d.last_status ? d.last_status + (d.last_response ? ": " + d.last_response.slice(0, 120) : "") : (d.last_error || _("not sent yet"));
          var again = button(_("Send again"), _("Send the {event} message again", { event: d.event }));
          again.addEventListener("click", function () {
            Admin.api("POST", "/api/webhooks/deliveries/" + d.id + "/retry")
              .then(function () { Admin.say(said, _("The message goes again."), "ok"); return show(); })
              .catch(function (e) { Admin.say(said, _("Not sent again: {why}", { why: e.message }), "error"); });
          });
          tr.append(cell(event), cell(badge, _("State")), cell(answerText, _("Last answer")), cell(d.last_attempt ? Admin.when(d.last_attempt) : "—", _("Sent")), cell(again));
          rows.appendChild(tr);
          oldest = d.id;
        });
        none.hidden = rows.children.length > 0;
        deliveries.hidden = rows.children.length === 0;
        more.hidden = answer.deliveries.length < PAGE;
      }).catch(function (e) { Admin.say(said, _("Messages not read: {why}", { why: e.message }), "error"); });
    };
    more.addEventListener("click", function () { show(oldest); });
    show();
  }
});

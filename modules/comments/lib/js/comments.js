/* The comment form (the comments module's _comments.tpl):
 * - a ticket from /api/form-ticket when the visitor starts typing: the page
 *   is one cached copy for everyone, so the ticket cannot be in it; a post is
 *   held back until the ticket is old enough (data-min-fill, milliseconds,
 *   3500 by default: a little over the site's `min_fill_seconds`);
 * - Reply buttons (hidden without script) that make the comment an answer;
 * - posting without leaving the page, saying in place what happened; what
 *   was typed stays until the comment is stored.
 * Without script the form posts to /comments/post and gets a page back. */
(function () {
  "use strict";
  // The page's texts (core's js/texts.js), or the English as written where
  // a site's own template loads this script without them.
  const _ = window._ || ((t, v = {}) => t.replace(/\{(\w+)\}/g, (m, k) => (k in v ? String(v[k]) : m)));
  var forms = document.querySelectorAll("form[data-comment-form]");
  if (!forms.length) return;

  function showReplyButtons() {
    document.querySelectorAll("[data-reply]").forEach(function (b) { b.hidden = false; });
  }
  showReplyButtons();
  document.addEventListener("bulwark:updated", showReplyButtons);

  forms.forEach(function (form) {
    var status = form.querySelector(".comment-status");
    var replying = form.querySelector(".comment-replying");
    var submit = form.querySelector("button[type=submit]");
    var minFill = Number(form.dataset.minFill || 3500);
    var ticket = null;
    var ticketAt = 0;

    function askTicket() {
      if (!ticket) {
        var url = "/api/form-ticket?for=" + encodeURIComponent(form.dataset.ticketFor || "");
        ticket = fetch(url, { cache: "no-store", credentials: "same-origin" })
          .then(function (r) { if (!r.ok) throw new Error("no ticket"); return r.json(); })
          .then(function (answer) {
            form.elements._ticket.value = answer.ticket;
            ticketAt = Date.now();
            return answer.ticket;
          })
          .catch(function () { ticket = null; return null; });
      }
      return ticket;
    }
    form.addEventListener("focusin", askTicket);

    function say(text, kind) {
      status.textContent = text;
      status.className = "comment-status" + (kind ? " " + kind : "");
    }
    function cancelReply() {
      form.elements.parent.value = "";
      replying.hidden = true;
    }
    document.addEventListener("click", function (event) {
      var button = event.target.closest("[data-reply]");
      if (!button) return;
      form.elements.parent.value = button.dataset.reply;
      replying.querySelector("strong").textContent = button.dataset.name;
      replying.hidden = false;
      form.elements.body.focus();
    });
    replying.querySelector("button").addEventListener("click", function () {
      cancelReply();
      form.elements.body.focus();
    });

    function field(name) { return form.elements[name] ? form.elements[name].value : undefined; }
    function refreshList() {
      // The list is a live block: push brings it too; this is for a page
      // whose push connection is not up (yet).
      var list = form.closest(".comments").querySelector("[data-live]");
      if (!list) return;
      fetch(location.href, { cache: "no-store", credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(list.id);
          if (fresh && fresh.innerHTML !== list.innerHTML) {
            list.innerHTML = fresh.innerHTML;
            list.dispatchEvent(new CustomEvent("bulwark:updated", { bubbles: true }));
          }
        });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      form.querySelectorAll("[aria-invalid]").forEach(function (el) { el.removeAttribute("aria-invalid"); });
      submit.disabled = true;
      say(_("Posting…"));
      Promise.resolve(askTicket())
        .then(function () {
          var wait = ticketAt ? minFill - (Date.now() - ticketAt) : 0;
          return new Promise(function (done) { setTimeout(done, Math.max(0, wait)); });
        })
        .then(function () {
          var headers = { "Content-Type": "application/json", "Accept": "application/json" };
          if (form.elements._csrf) headers["X-CSRF-Token"] = form.elements._csrf.value;
          var parent = field("parent");
          return fetch("/api/comments", {
            method: "POST",
            credentials: "same-origin",
            headers: headers,
            body: JSON.stringify({
              rsc: Number(field("rsc")),
              parent: parent ? Number(parent) : null,
              name: field("name"),
              email: field("email"),
              url: field("url") || null,
              body: field("body"),
              extra_info: field("extra_info"),
              _ticket: field("_ticket"),
            }),
          });
        })
        .then(function (r) {
          return r.json().catch(function () { return {}; }).then(function (answer) {
            if (r.status === 201) {
              say(_("Thank you: your comment is on the page."), "ok");
              form.elements.body.value = "";
              cancelReply();
              refreshList();
            } else if (r.status === 202) {
              say(_("Thank you. Your comment will appear once a moderator has read it."), "ok");
              form.elements.body.value = "";
              cancelReply();
            } else {
              var wrong = answer.field && form.elements[answer.field];
              if (wrong && wrong.focus) {
                wrong.setAttribute("aria-invalid", "true");
                wrong.focus();
              }
              say(answer.detail || _("Your comment was not posted; please try again."), "error");
            }
          });
        })
        .catch(function () { say(_("Your comment was not posted (no connection?); it is still here: try again."), "error"); })
        .then(function () {
          submit.disabled = false;
          // A ticket is good for one post: the next asks for a new one.
          ticket = null;
          ticketAt = 0;
          form.elements._ticket.value = "";
        });
    });
  });
})();

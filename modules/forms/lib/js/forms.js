/* Forms built in the admin (the forms module's _form.tpl): a ticket from
 * /api/form-ticket?for=form:<id> (data-ticket-for: one post to this form,
 * within an hour) when the visitor starts filling one in (the page is one
 * cached copy for everyone, so the ticket cannot be in it), and a form sent
 * by a quick visitor is held back until the ticket is old enough
 * (data-min-fill, milliseconds, 3500 by default: a little over the site's
 * `[forms] min_fill_seconds`). The form itself is sent as a browser sends
 * it: the answer is a page. */
(function () {
  "use strict";
  document.querySelectorAll("form[data-site-form]").forEach(function (form) {
    var field = form.elements._ticket;
    var minFill = Number(form.dataset.minFill || 3500);
    var asked = null;
    var gotAt = field.value ? Date.now() : 0;
    function ask() {
      if (!asked && !field.value) {
        var url = "/api/form-ticket?for=" + encodeURIComponent(form.dataset.ticketFor || "");
        asked = fetch(url, { cache: "no-store", credentials: "same-origin" })
          .then(function (r) { if (!r.ok) throw new Error("no ticket"); return r.json(); })
          .then(function (answer) { field.value = answer.ticket; gotAt = Date.now(); })
          .catch(function () { asked = null; });
      }
      return asked || Promise.resolve();
    }
    form.addEventListener("focusin", ask);
    var sending = false;
    form.addEventListener("submit", function (event) {
      if (sending) return;
      event.preventDefault();
      var button = form.querySelector('button[type="submit"]');
      if (button) button.disabled = true;
      ask().then(function () {
        var wait = gotAt ? minFill - (Date.now() - gotAt) : 0;
        setTimeout(function () {
          sending = true;
          if (button) button.disabled = false;
          // requestSubmit keeps the browser's own checks of required fields.
          if (form.requestSubmit) form.requestSubmit(); else form.submit();
        }, Math.max(0, wait));
      });
    });
  });
})();

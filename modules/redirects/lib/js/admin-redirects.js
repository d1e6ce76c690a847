// The admin's Redirects screen: the rules through /api/redirects (admin.js's
// Admin.api: the CSRF token, errors in words), added one by one or from a CSV
// file, each with its hits.
(function () {
  "use strict";
  var table = document.getElementById("redirects");
  if (!table) return;
  var body = table.querySelector("tbody");
  var status = document.getElementById("redirects-status");
  var empty = document.getElementById("redirects-empty");

  function cell(text, label) {
    var td = document.createElement("td");
    if (label) td.dataset.label = label;
    if (text instanceof Node) td.appendChild(text); else td.textContent = text;
    return td;
  }
  function show(rules) {
    body.replaceChildren();
    empty.hidden = rules.length > 0;
    table.hidden = rules.length === 0;
    rules.forEach(function (r) {
      var tr = document.createElement("tr");
      var from = document.createElement("code");
      from.textContent = r.from;
      var to = r.to || (r.to_rsc ? _("page {id}", { id: r.to_rsc }) : _("nothing"));
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "danger";
      remove.textContent = _("Remove");
      remove.setAttribute("aria-label", _("Remove the redirect of {from}", { from: r.from }));
      remove.addEventListener("click", function () {
        Admin.api("DELETE", "/api/redirects/" + r.id)
          .then(function () { Admin.say(status, _("Removed the redirect of {from}.", { from: r.from }), "ok"); return load(); })
          .catch(function (e) { Admin.say(status, _("Not removed: {why}", { why: e.message }), "error"); });
      });
      tr.append(
        cell(from),
        cell(to, _("Goes to")),
        cell(String(r.status), _("Answer")),
        cell(String(r.hits), _("Hits")),
        cell(r.last_hit ? Admin.when(r.last_hit) : _("never"), _("Last hit")),
        cell(remove));
      body.appendChild(tr);
    });
  }
  function load() {
    return Admin.api("GET", "/api/redirects").then(function (answer) { show(answer.redirects); });
  }

  var add = document.getElementById("new-redirect");
  add.addEventListener("submit", function (event) {
    event.preventDefault();
    var to = add.elements.to.value.trim();
    Admin.api("POST", "/api/redirects", {
      from: add.elements.from.value.trim(),
      to: to || null,
      status: Number(add.elements.status.value),
    })
      .then(function (made) {
        Admin.say(status, _("Added: {from} now answers {status}.", { from: made.from, status: made.status }), "ok");
        add.reset();
        add.elements.from.focus();
        return load();
      })
      .catch(function (e) { Admin.say(status, _("Not added: {why}", { why: e.message }), "error"); });
  });

  var importer = document.getElementById("import-redirects");
  importer.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = importer.elements.file.files[0];
    if (!file) { Admin.say(status, _("Choose a CSV file first."), "error"); return; }
    file.text()
      .then(function (csv) { return Admin.api("POST", "/api/redirects/import", { csv: csv }); })
      .then(function (done) {
        Admin.say(status, _("Redirects imported: {n}.", { n: done.imported }), "ok");
        importer.reset();
        return load();
      })
      .catch(function (e) { Admin.say(status, _("Not imported: {why}", { why: e.message }), "error"); });
  });

  load().catch(function (e) { Admin.say(status, _("Could not list the redirects: {why}", { why: e.message }), "error"); });
})();

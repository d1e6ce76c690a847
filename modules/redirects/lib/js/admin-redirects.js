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
      var to = r.to || (r.to_rsc ? "page " + r.to_rsc : "nothing");
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "danger";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove the redirect of " + r.from);
      remove.addEventListener("click", function () {
        Admin.api("DELETE", "/api/redirects/" + r.id)
          .then(function () { Admin.say(status, "Removed the redirect of " + r.from + ".", "ok"); return load(); })
          .catch(function (e) { Admin.say(status, "Not removed: " + e.message, "error"); });
      });
      tr.append(
        cell(from),
        cell(to, "Goes to"),
        cell(String(r.status), "Answer"),
        cell(String(r.hits), "Hits"),
        cell(r.last_hit ? Admin.when(r.last_hit) : "never", "Last hit"),
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
        Admin.say(status, "Added: " + made.from + " now answers " + made.status + ".", "ok");
        add.reset();
        add.elements.from.focus();
        return load();
      })
      .catch(function (e) { Admin.say(status, "Not added: " + e.message, "error"); });
  });

  var importer = document.getElementById("import-redirects");
  importer.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = importer.elements.file.files[0];
    if (!file) { Admin.say(status, "Choose a CSV file first.", "error"); return; }
    file.text()
      .then(function (csv) { return Admin.api("POST", "/api/redirects/import", { csv: csv }); })
      .then(function (done) {
        Admin.say(status, "Imported " + done.imported + " redirect" + (done.imported === 1 ? "" : "s") + ".", "ok");
        importer.reset();
        return load();
      })
      .catch(function (e) { Admin.say(status, "Not imported: " + e.message, "error"); });
  });

  load().catch(function (e) { Admin.say(status, "Could not list the redirects: " + e.message, "error"); });
})();

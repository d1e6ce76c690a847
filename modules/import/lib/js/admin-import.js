// The admin's Import screen: the export uploaded to /api/import/wordpress, the
// import's progress over push (the user's own topic user/{id}/import/{job}),
// read from /api/import/jobs/{id} when push is not there, and its report.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var form = document.getElementById("import-form");
  if (!form) return;
  var status = document.getElementById("import-status");
  var progress = document.getElementById("import-progress");
  var bar = document.getElementById("import-bar");
  var stage = document.getElementById("import-stage");
  var report = document.getElementById("import-report");
  var job = null;
  var finished = false;
  var polling = null;
  // The stages the server names (src/admin.rs, src/wordpress.rs), in the
  // page's language; a stage not here is shown as the server names it.
  var stages = {
    "starting": _("starting"),
    "checking the file": _("checking the file"),
    "authors, categories and tags": _("authors, categories and tags"),
    "media": _("media"),
    "posts and pages": _("posts and pages"),
    "pages' order and menus": _("pages' order and menus"),
  };

  function show(j) {
    if (!job || j.id !== job || finished) return;
    progress.hidden = false;
    var total = j.total || 0;
    bar.max = Math.max(total, 1);
    bar.value = Math.min(j.done || 0, bar.max);
    if (!total) bar.removeAttribute("value");
    var key = j.stage || "starting";
    var named = (Object.prototype.hasOwnProperty.call(stages, key) ? stages[key] : key).replace(/^./, function (c) { return c.toUpperCase(); });
    stage.textContent = total
      ? _("{stage}: {done} of {total}", { stage: named, done: (j.done || 0).toLocaleString(), total: total.toLocaleString() })
      : named;
    if (j.state === "done") {
      finished = true;
      bar.value = bar.max;
      stage.textContent = _("Done");
      Admin.say(status, _("The import is done: its report is below."), "ok");
      showReport(j.report);
      form.querySelector("button").disabled = false;
    } else if (j.state === "failed") {
      finished = true;
      progress.hidden = true;
      Admin.say(status, _("The import stopped: {error}. Nothing of the file was written if it was broken; otherwise run it again, it continues where it stopped.", { error: j.error }), "error");
      form.querySelector("button").disabled = false;
    }
    if (finished && polling) clearInterval(polling);
  }

  function list(id, items, text) {
    var box = document.getElementById(id);
    var ul = box.querySelector("ul");
    ul.replaceChildren();
    items.forEach(function (item) {
      var li = document.createElement("li");
      li.textContent = text(item);
      ul.appendChild(li);
    });
    box.hidden = items.length === 0;
  }

  function showReport(r) {
    var body = document.querySelector("#import-counts tbody");
    body.replaceChildren();
    Object.keys(r.counts).forEach(function (kind) {
      var c = r.counts[kind];
      var tr = document.createElement("tr");
      [kind, c.imported, c.updated, c.unchanged, c.skipped].forEach(function (v, i) {
        var cell = document.createElement(i === 0 ? "th" : "td");
        if (i === 0) cell.scope = "row";
        cell.textContent = typeof v === "number" ? v.toLocaleString() : v;
        if (i > 0) cell.dataset.label = ["", _("Imported"), _("Updated"), _("Unchanged"), _("Skipped")][i];
        tr.appendChild(cell);
      });
      body.appendChild(tr);
    });
    list("import-skipped", r.skipped, function (s) { return s.item + ": " + s.why; });
    list("import-notes", r.notes, function (s) { return s.item + ": " + s.why; });
    list("import-shortcodes", Object.keys(r.unknown_shortcodes), function (name) {
      return _("[{name}] (posts: {n})", { name: name, n: r.unknown_shortcodes[name] });
    });
    report.hidden = false;
    report.querySelector("h2").focus && report.querySelector("h2").setAttribute("tabindex", "-1");
    report.querySelector("h2").focus();
  }

  function poll() {
    if (polling || finished) return;
    polling = setInterval(function () {
      if (!job) return;
      Admin.api("GET", "/api/import/jobs/" + job).then(show, function (e) {
        Admin.say(status, _("Reading the import's progress failed: {why}", { why: e.message }), "error");
      });
    }, 1500);
  }

  // Progress over push, when the site has it; else (or when it breaks) read.
  var me = form.dataset.user;
  if (window.Bulwark && window.Bulwark.push && me) {
    var push = window.Bulwark.push();
    push.subscribe("user/" + me + "/import/+", show);
    push.on("error", poll);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var data = new FormData(form);
    var file = data.get("file");
    if (!file || !file.name) {
      Admin.say(status, _("Choose the export file first."), "error");
      return;
    }
    form.querySelector("button").disabled = true;
    report.hidden = true;
    finished = false;
    Admin.say(status, _("Sending {name}…", { name: file.name }));
    fetch("/api/import/wordpress", {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRF-Token": Admin.csrf },
      body: data,
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (answer) {
        if (!res.ok) throw new Error(answer.detail || res.status + " " + res.statusText);
        return answer;
      });
    }).then(function (answer) {
      job = answer.id;
      Admin.say(status, _("{name} arrived; importing. You may leave this screen: the import goes on.", { name: file.name }));
      show(answer);
      if (!(window.Bulwark && window.Bulwark.push && me)) poll();
      // A message pushed before this answer came is read once here.
      Admin.api("GET", "/api/import/jobs/" + job).then(show, function () {});
    }, function (e) {
      form.querySelector("button").disabled = false;
      Admin.say(status, _("The import did not start: {why}", { why: e.message }), "error");
    });
  });
});

// The admin's Comments screen: the comments of one status through
// /api/comments (admin.js's Admin.api), a page at a time, and bulk
// moderation (PATCH /api/comments with the selected ids).
(function () {
  "use strict";
  const _ = window._ || ((t, v = {}) => t.replace(/\{(\w+)\}/g, (m, k) => (k in v ? String(v[k]) : m)));
  var form = document.getElementById("comments-bulk");
  if (!form) return;
  var shown = form.dataset.status;
  var body = document.querySelector("#comments-list tbody");
  var table = document.getElementById("comments-list");
  var empty = document.getElementById("comments-empty");
  var more = document.getElementById("comments-more");
  var status = document.getElementById("comments-status");
  var all = document.getElementById("comments-all");
  var oldest = null;
  var PAGE = 50;

  function cell(content, label) {
    var td = document.createElement("td");
    if (label) td.dataset.label = label;
    if (content instanceof Node) td.appendChild(content); else td.textContent = content;
    return td;
  }
  function row(c) {
    var tr = document.createElement("tr");
    tr.id = "comment-row-" + c.id;
    var box = document.createElement("input");
    box.type = "checkbox";
    box.name = "id";
    box.value = c.id;
    box.setAttribute("aria-label", _("Select the comment by {name}", { name: c.name }));
    var select = cell(box);
    select.className = "select";
    var text = document.createElement("div");
    text.className = "comment-text";
    text.textContent = c.body.length > 400 ? c.body.slice(0, 400) + "…" : c.body;
    var by = document.createElement("div");
    var name = document.createElement("strong");
    name.textContent = c.name;
    var mail = document.createElement("small");
    mail.textContent = c.email + (c.address ? " · " + c.address : "");
    by.append(name, document.createElement("br"), mail);
    var on = c.rsc_page ? document.createElement("a") : document.createElement("span");
    on.textContent = c.rsc_title;
    if (c.rsc_page) on.href = c.rsc_page + "#comment-" + c.id;
    tr.append(select, cell(text, _("Comment")), cell(by, _("By")), cell(on, _("On")), cell(Admin.when(c.created), _("Written")));
    return tr;
  }
  function counts(numbers) {
    document.querySelectorAll("[data-count]").forEach(function (el) {
      var n = numbers[el.dataset.count] || 0;
      el.textContent = "(" + n + ")";
    });
  }
  function load(before) {
    var url = "/api/comments?status=" + shown + "&limit=" + PAGE + (before ? "&before=" + before : "");
    return Admin.api("GET", url).then(function (answer) {
      if (!before) body.replaceChildren();
      answer.comments.forEach(function (c) { body.appendChild(row(c)); oldest = c.id; });
      counts(answer.counts);
      var none = body.children.length === 0;
      empty.hidden = !none;
      table.hidden = none;
      more.hidden = answer.comments.length < PAGE;
    }).catch(function (e) { Admin.say(status, _("Comments not read: {reason}", { reason: e.message }), "error"); });
  }
  all.addEventListener("change", function () {
    body.querySelectorAll('input[name="id"]').forEach(function (b) { b.checked = all.checked; });
  });
  more.addEventListener("click", function () { load(oldest); });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var action = event.submitter ? event.submitter.value : "";
    var ids = Array.prototype.map.call(body.querySelectorAll('input[name="id"]:checked'), function (b) { return Number(b.value); });
    if (!ids.length) { Admin.say(status, _("Select one or more comments first."), "error"); return; }
    Admin.say(status, _("Working…"));
    Admin.api("PATCH", "/api/comments", { ids: ids, status: action })
      .then(function (done) {
        // No plural forms in scripts: the count stands alone.
        var words = {
          approved: _("Comments approved: {n}", { n: done.changed }),
          pending: _("Comments held: {n}", { n: done.changed }),
          spam: _("Comments marked as spam: {n}", { n: done.changed }),
          deleted: _("Comments deleted: {n}", { n: done.changed }),
        };
        Admin.say(status, words[action], "ok");
        all.checked = false;
        return load();
      })
      .catch(function (e) { Admin.say(status, _("Not done: {reason}", { reason: e.message }), "error"); });
  });
  load();
})();

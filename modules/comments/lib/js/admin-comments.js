// The admin's Comments screen: the comments of one status through
// /api/comments (admin.js's Admin.api), a page at a time, and bulk
// moderation (PATCH /api/comments with the selected ids).
(function () {
  "use strict";
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
    box.setAttribute("aria-label", "Select the comment by " + c.name);
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
    tr.append(select, cell(text, "Comment"), cell(by, "By"), cell(on, "On"), cell(Admin.when(c.created), "Written"));
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
    }).catch(function (e) { Admin.say(status, "Comments not read: " + e.message, "error"); });
  }
  all.addEventListener("change", function () {
    body.querySelectorAll('input[name="id"]').forEach(function (b) { b.checked = all.checked; });
  });
  more.addEventListener("click", function () { load(oldest); });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var action = event.submitter ? event.submitter.value : "";
    var ids = Array.prototype.map.call(body.querySelectorAll('input[name="id"]:checked'), function (b) { return Number(b.value); });
    if (!ids.length) { Admin.say(status, "Select one or more comments first.", "error"); return; }
    Admin.say(status, "Working…");
    Admin.api("PATCH", "/api/comments", { ids: ids, status: action })
      .then(function (done) {
        var words = { approved: "Approved", pending: "Held", spam: "Marked as spam", deleted: "Deleted" };
        Admin.say(status, words[action] + ": " + done.changed + " comment" + (done.changed === 1 ? "" : "s") + ".", "ok");
        all.checked = false;
        return load();
      })
      .catch(function (e) { Admin.say(status, "Not done: " + e.message, "error"); });
  });
  load();
})();

// The Forms screens: a new form (a resource of the category "form" named
// form_<name>, made through the JSON API); a form's answers, a page at a
// time, from /api/forms/{id}/submissions; and the form builder in the
// resource's editor, which saves the fields, recipients, thanks and button
// into the resource's properties (PATCH /api/rsc/{id} with If-Match the
// editor's version: a change saved elsewhere meanwhile is refused, not
// overwritten).
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  // Taken here, not when the file loads: the editor loads this file before
  // the page's texts (core's js/texts.js, at the end of admin_base.tpl).
  const _ = window._ || ((t, v = {}) => t.replace(/\{(\w+)\}/g, (m, k) => (k in v ? String(v[k]) : m)));

  var made = document.getElementById("new-form");
  if (made) {
    var madeStatus = document.getElementById("new-form-status");
    made.addEventListener("submit", function (event) {
      event.preventDefault();
      Admin.api("POST", "/api/rsc", {
        category: "form",
        name: "form_" + made.elements.name.value.trim(),
        published: true,
        props: { title: made.elements.title.value.trim(), fields: [], recipients: [], submit: "Send" },
      })
        .then(function (form) { window.location.href = "/admin/edit/" + form.id; })
        .catch(function (e) { Admin.say(madeStatus, _("Not made: {reason}", { reason: e.message }), "error"); });
    });
  }

  var answers = document.getElementById("answers");
  if (answers) {
    var formId = answers.dataset.form;
    var head = answers.querySelector("thead tr");
    var body = answers.querySelector("tbody");
    var more = document.getElementById("answers-more");
    var empty = document.getElementById("answers-empty");
    var status = document.getElementById("answers-status");
    var oldest = null;
    var PAGE = 50;
    var shown = function (field, value) {
      if (value === undefined || value === null) return "";
      if (field.type === "checkbox") return _("yes");
      if (field.type === "file") {
        var a = document.createElement("a");
        a.href = "/media/file/" + value;
        a.textContent = _("the file");
        return a;
      }
      return Array.isArray(value) ? value.join(", ") : String(value);
    };
    var cell = function (content, label) {
      var td = document.createElement("td");
      if (label) td.dataset.label = label;
      if (content instanceof Node) td.appendChild(content); else td.textContent = content;
      return td;
    };
    var load = function (before) {
      var url = "/api/forms/" + formId + "/submissions?limit=" + PAGE + (before ? "&before=" + before : "");
      return Admin.api("GET", url).then(function (answer) {
        if (!before) {
          head.replaceChildren();
          answer.form.fields.concat([{ label: _("Sent") }]).forEach(function (f) {
            var th = document.createElement("th");
            th.scope = "col";
            th.textContent = f.label;
            head.appendChild(th);
          });
          body.replaceChildren();
        }
        answer.submissions.forEach(function (s) {
          var tr = document.createElement("tr");
          answer.form.fields.forEach(function (f) { tr.appendChild(cell(shown(f, s.answers[f.name]), f.label)); });
          tr.appendChild(cell(Admin.when(s.created), _("Sent")));
          body.appendChild(tr);
          oldest = s.id;
        });
        empty.hidden = body.children.length > 0;
        answers.hidden = body.children.length === 0;
        more.hidden = answer.submissions.length < PAGE;
      }).catch(function (e) { Admin.say(status, _("Answers not read: {reason}", { reason: e.message }), "error"); });
    };
    more.addEventListener("click", function () { load(oldest); });
    load();
  }

  var builder = document.getElementById("form-builder");
  if (!builder) return;
  var id = builder.dataset.id;
  var list = document.getElementById("form-fields");
  var row = document.getElementById("form-field-row");
  var say = function (text, kind) { Admin.say(document.getElementById("form-status"), text, kind); };
  var editor = document.getElementById("editor");
  var changed = false;
  var touched = function () { changed = true; };

  // A field's name, from its question: what the answers are kept under.
  var nameOf = function (label, taken) {
    var base = label.toLowerCase().normalize("NFD").replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 36) || "field";
    if (/^[0-9]/.test(base)) base = "f_" + base;
    var name = base, n = 2;
    while (taken.indexOf(name) >= 0) name = base + "_" + n++;
    return name;
  };
  var showParts = function (li) {
    var type = li.querySelector(".f-type").value;
    li.querySelector(".f-options-label").hidden = type !== "choice" && type !== "multiple";
    li.querySelector(".f-range").hidden = type !== "number";
  };
  var add = function (field) {
    var li = row.content.firstElementChild.cloneNode(true);
    li.dataset.name = field.name || "";
    li.querySelector(".f-label").value = field.label || "";
    li.querySelector(".f-type").value = field.type || "text";
    li.querySelector(".f-required").checked = !!field.required;
    li.querySelector(".f-options").value = (field.options || []).join("\n");
    li.querySelector(".f-min").value = field.min === undefined || field.min === null ? "" : field.min;
    li.querySelector(".f-max").value = field.max === undefined || field.max === null ? "" : field.max;
    li.querySelector(".f-help").value = field.help || "";
    li.querySelector(".f-name").textContent = field.name ? _("kept as {name}", { name: field.name }) : "";
    li.querySelector(".f-type").addEventListener("change", function () { showParts(li); });
    li.addEventListener("input", touched);
    li.addEventListener("change", touched);
    showParts(li);
    list.appendChild(li);
    refresh();
    return li;
  };
  var refresh = function () {
    document.getElementById("form-fields-empty").hidden = list.children.length > 0;
    Array.prototype.forEach.call(list.children, function (li, i) {
      var label = li.querySelector(".f-label").value || _("field {n}", { n: i + 1 });
      li.querySelectorAll(".row-actions button").forEach(function (b) {
        b.setAttribute("aria-label", _("{action}: {field}", { action: b.textContent, field: label }));
      });
    });
  };
  list.addEventListener("click", function (event) {
    var b = event.target.closest("button[data-action]");
    if (!b) return;
    var li = b.closest("li");
    if (b.dataset.action === "up" && li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
    if (b.dataset.action === "down" && li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
    if (b.dataset.action === "remove") li.remove();
    b.focus();
    touched();
    refresh();
  });
  JSON.parse(document.getElementById("form-fields-data").textContent || "[]").forEach(add);
  document.getElementById("form-add-field").addEventListener("click", function () {
    add({ type: "text" }).querySelector(".f-label").focus();
    touched();
  });
  ["form-recipients", "form-thanks", "form-submit"].forEach(function (el) {
    document.getElementById(el).addEventListener("input", touched);
  });

  // The fields as the `fields` property keeps them, or what is wrong.
  var fields = function () {
    var taken = [];
    var out = [];
    var wrong = null;
    Array.prototype.forEach.call(list.children, function (li, i) {
      var label = li.querySelector(".f-label").value.trim();
      if (!label && !wrong) wrong = _("field {n} needs a question", { n: i + 1 });
      var name = li.dataset.name || nameOf(label, taken);
      taken.push(name);
      var type = li.querySelector(".f-type").value;
      var field = { name: name, label: label, type: type, required: li.querySelector(".f-required").checked };
      var help = li.querySelector(".f-help").value.trim();
      if (help) field.help = help;
      if (type === "choice" || type === "multiple") {
        field.options = li.querySelector(".f-options").value.split("\n").map(function (o) { return o.trim(); }).filter(Boolean);
        if (!field.options.length && !wrong) wrong = _("“{field}” needs options to choose from", { field: label });
      }
      if (type === "number") {
        var min = li.querySelector(".f-min").value, max = li.querySelector(".f-max").value;
        if (min !== "") field.min = Number(min);
        if (max !== "") field.max = Number(max);
      }
      out.push(field);
    });
    return { fields: out, wrong: wrong };
  };

  document.getElementById("form-save").addEventListener("click", function () {
    var made = fields();
    if (made.wrong) { say(_("Not saved: {reason}.", { reason: made.wrong }), "error"); return; }
    var recipients = document.getElementById("form-recipients").value.split(",").map(function (a) { return a.trim(); }).filter(Boolean);
    say(_("Saving…"), "");
    Admin.api("PATCH", "/api/rsc/" + id, {
      props: {
        fields: made.fields,
        recipients: recipients,
        thanks: document.getElementById("form-thanks").value.trim(),
        submit: document.getElementById("form-submit").value.trim() || "Send",
      },
    }, { ifMatch: editor.dataset.version })
      .then(function (saved) {
        editor.dataset.version = saved.version;
        Array.prototype.forEach.call(list.children, function (li, i) {
          li.dataset.name = made.fields[i].name;
          li.querySelector(".f-name").textContent = _("kept as {name}", { name: made.fields[i].name });
        });
        changed = false;
        say(_("Saved the form."), "ok");
        Admin.toast(_("Saved the form."));
      })
      .catch(function (e) {
        if (e.status === 409 || e.status === 412) {
          say(_("Not saved: someone else changed this form meanwhile. Reload the page to see theirs (yours is lost then)."), "error");
        } else {
          say(_("Not saved: {reason}", { reason: e.message }), "error");
        }
      });
  });

  window.addEventListener("beforeunload", function (event) {
    if (!changed) return;
    event.preventDefault();
    event.returnValue = "";
  });
});

// The side-by-side translations screen: a resource's texts in every language
// of the site. Empty fields are flagged as missing; "Copy" fills a language's
// empty fields from another; what is typed is kept in this browser (local
// storage) until it is saved, and offered back after a closed tab or a lost
// connection; leaving with unsaved text asks first.
(function () {
  var form = document.getElementById("translations");
  if (!form) return;
  var id = form.dataset.id;
  var languages = form.dataset.languages.split(",");
  var key = "bulwark.translations." + location.host + "." + id;
  var status = document.getElementById("status");
  var cells = Array.prototype.slice.call(form.querySelectorAll("[data-field]"));
  // Each holds the stored source: shown as text where it is text (admin.js).
  cells.forEach(Admin.showStored);
  var publishedIn = Array.prototype.slice.call(form.querySelectorAll('input[name="published-in"]'));

  function values() {
    var v = {};
    cells.forEach(function (c) { v[c.id] = c.value; });
    v.publishedIn = publishedIn.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    return v;
  }
  var saved = JSON.stringify(values());
  function dirty() { return JSON.stringify(values()) !== saved; }

  // Missing: a language's field left empty. Said once for all, and by each field.
  function flag() {
    var missing = {};
    cells.forEach(function (c) {
      var empty = c.value.trim() === "";
      document.getElementById(c.id + "-missing").hidden = !empty;
      c.setAttribute("aria-invalid", empty ? "true" : "false");
      if (empty && c.dataset.field === "title") missing[c.dataset.language] = true;
    });
    var langs = Object.keys(missing);
    document.getElementById("missing-summary").textContent = langs.length
      ? _("No title yet in: {languages}.", { languages: langs.map(function (l) { return labelOf(l); }).join(", ") })
      : _("Every language has a title.");
  }
  function labelOf(lang) {
    var label = form.querySelector('label[for="title-' + lang + '"]');
    return label ? label.textContent : lang;
  }

  function keep() {
    if (!dirty()) { localStorage.removeItem(key); return; }
    try {
      localStorage.setItem(key, JSON.stringify({ version: form.dataset.version, values: values() }));
    } catch (e) { /* a full or closed storage: the page still has the text */ }
  }

  // Text typed before and not saved: back in its fields, said so.
  try {
    var kept = JSON.parse(localStorage.getItem(key) || "null");
    if (kept && kept.values) {
      cells.forEach(function (c) { if (c.id in kept.values) c.value = kept.values[c.id]; });
      if (kept.values.publishedIn) {
        publishedIn.forEach(function (b) { b.checked = kept.values.publishedIn.indexOf(b.value) >= 0; });
      }
      if (dirty()) {
        var note = document.getElementById("restored");
        note.textContent = kept.version !== form.dataset.version
          ? _("What you typed here before and did not save is back in its fields (the resource was saved since: compare before you save).")
          : _("What you typed here before and did not save is back in its fields.");
        note.hidden = false;
      }
    }
  } catch (e) { localStorage.removeItem(key); }
  flag();

  form.addEventListener("input", function () { flag(); keep(); });
  form.addEventListener("change", function () { keep(); });
  window.addEventListener("beforeunload", function (event) {
    if (dirty()) { keep(); event.preventDefault(); event.returnValue = ""; }
  });

  form.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var to = button.dataset.copy;
      var from = document.getElementById("copy-" + to).value;
      var filled = 0;
      cells.forEach(function (c) {
        if (c.dataset.language !== to || c.value.trim() !== "") return;
        var source = document.getElementById(c.dataset.field + "-" + from);
        if (source && source.value.trim() !== "") {
          c.value = source.value;
          c.dataset.stored = source.dataset.stored;
          filled++;
        }
      });
      flag();
      keep();
      Admin.say(status, filled
        ? _("Filled {n} empty field(s) of {to} from {from}.", { n: filled, to: labelOf(to), from: labelOf(from) })
        : _("Nothing to fill: no empty field has a text to copy."), "ok");
    });
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var props = {};
    cells.forEach(function (c) {
      var field = c.dataset.field;
      props[field] = props[field] || { trans: {} };
      // An empty field removes that language's text.
      props[field].trans[c.dataset.language] = c.value.trim() === "" ? "" : Admin.storedValue(c);
    });
    // A field empty in every language is not stored at all.
    Object.keys(props).forEach(function (field) {
      var any = languages.some(function (l) { return props[field].trans[l] !== ""; });
      if (!any) props[field] = null;
    });
    // Published in every language: no list (a language added later is too).
    var chosen = values().publishedIn;
    props.languages = chosen.length === languages.length ? null : chosen;
    Admin.say(status, _("Saving…"));
    Admin.api("PATCH", "/api/rsc/" + id, { props: props }, { ifMatch: form.dataset.version })
      .then(function (answer) {
        form.dataset.version = answer.version;
        saved = JSON.stringify(values());
        localStorage.removeItem(key);
        document.getElementById("restored").hidden = true;
        Admin.say(status, _("Saved in every language."), "ok");
        Admin.toast(_("Translations saved."));
      })
      .catch(function (err) {
        keep();
        var why = err.status === 412 || err.status === 409
          ? _("Someone else saved this resource meanwhile. Your text stays here (and in this browser): open the editor in another tab to see theirs, then save again.")
          : _("Not saved: {reason}. Your text stays here.", { reason: err.message });
        Admin.say(status, why, "error");
      });
  });
})();

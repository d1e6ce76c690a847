// The admin's shared script: one way to call the JSON API (the session's CSRF
// token on every change, errors as a sentence), and the behaviour of the
// screens that change things (bulk actions, categories, predicates, users,
// rules, settings, cache, backups). Each screen's part starts when its
// element is on the page.
var Admin = (function () {
  var csrf = document.querySelector('meta[name="csrf-token"]');
  csrf = csrf ? csrf.content : "";

  // Calls the API; resolves with the parsed answer, rejects with an Error
  // whose message says what went wrong (the API's own words when it has them)
  // and whose `status` is the answer's. `options.ifMatch`: the version the
  // change is made to (a change saved elsewhere meanwhile answers 412).
  function api(method, url, body, options) {
    var headers = { "X-CSRF-Token": csrf };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (options && options.ifMatch !== undefined) headers["If-Match"] = '"' + options.ifMatch + '"';
    return fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (res) {
      return res.text().then(function (text) {
        var answer = null;
        try { answer = text ? JSON.parse(text) : null; } catch (e) { answer = null; }
        if (!res.ok) {
          var why = answer && answer.detail ? answer.detail : res.status + " " + res.statusText;
          if (res.status === 503) why = _("the server is busy; try again in a moment ({why})", { why: why });
          var failed = new Error(why);
          failed.status = res.status;
          throw failed;
        }
        return answer;
      });
    }, function () {
      throw new Error(_("the server could not be reached; try again"));
    });
  }

  // Writes a message into the screen's status line (role=status, read out).
  function say(el, text, kind) {
    if (!el) return;
    el.textContent = text;
    el.className = "message " + (kind || "");
  }

  function on(selector, event, handler) {
    document.querySelectorAll(selector).forEach(function (el) {
      el.addEventListener(event, handler);
    });
  }

  // A moment as people read it ("3 minutes ago", "yesterday"), the full
  // date and time in the reader's own zone on hover and for screen readers.
  var relative = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: "auto" }) : null;
  var steps = [[60, "second"], [60, "minute"], [24, "hour"], [7, "day"], [4.35, "week"], [12, "month"], [Infinity, "year"]];
  function when(iso) {
    var t = new Date(iso);
    var el = document.createElement("time");
    el.dateTime = t.toISOString();
    var full = t.toLocaleString(undefined, { dateStyle: "full", timeStyle: "short" });
    el.title = full;
    var amount = (t.getTime() - Date.now()) / 1000;
    var unit = "second";
    for (var i = 0; i < steps.length && Math.abs(amount) >= steps[i][0]; i++) {
      amount /= steps[i][0];
      unit = steps[i + 1][1];
    }
    el.textContent = relative ? relative.format(Math.round(amount), unit) : full;
    return el;
  }

  // Moments the server wrote as RFC 3339 (`<time datetime>`), shown as
  // people read them.
  document.querySelectorAll("main time[datetime]").forEach(function (el) {
    if (!el.dateTime || isNaN(Date.parse(el.dateTime))) return;
    el.replaceWith(when(el.dateTime));
  });

  // A short message that comes and goes, for the eye: every toast echoes a
  // screen's own status line, which is what a screen reader reads out. Errors
  // stay until clicked.
  function toast(text, kind) {
    var region = document.getElementById("toasts");
    if (!region) return;
    var el = document.createElement("div");
    el.className = "toast " + (kind || "");
    el.textContent = text;
    region.appendChild(el);
    var gone = function () { el.remove(); };
    el.addEventListener("click", gone);
    if (kind !== "error") setTimeout(gone, 4000);
  }

  // On a phone the navigation folds behind the Menu button (without this
  // script it stays open: nothing is out of reach).
  var toggle = document.getElementById("nav-toggle");
  var nav = document.getElementById("sidenav");
  if (toggle && nav) {
    document.body.classList.add("js");
    toggle.hidden = false;
    toggle.addEventListener("click", function () {
      var open = nav.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      if (open) nav.querySelector("ul a").focus();
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && nav.classList.contains("open")) {
        nav.classList.remove("open");
        toggle.setAttribute("aria-expanded", "false");
        toggle.focus();
      }
    });
  }

  return { api: api, say: say, on: on, csrf: csrf, when: when, toast: toast };
})();

// Resources: bulk publish, unpublish, delete.
(function () {
  var form = document.getElementById("bulk");
  if (!form) return;
  var status = document.getElementById("bulk-status");
  var all = document.getElementById("select-all");
  if (all) all.addEventListener("change", function () {
    form.querySelectorAll('input[name="id"]').forEach(function (box) { box.checked = all.checked; });
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var action = event.submitter ? event.submitter.value : "";
    var ids = Array.prototype.map.call(form.querySelectorAll('input[name="id"]:checked'), function (b) { return b.value; });
    if (!ids.length) return Admin.say(status, _("Select one or more resources first."), "error");
    if (action === "delete" && !window.confirm(_("Delete {n} resource(s)? This cannot be undone here.", { n: ids.length }))) return;
    Admin.say(status, _("Working…"));
    var failed = [];
    var step = ids.reduce(function (chain, id) {
      return chain.then(function () {
        var call = action === "delete"
          ? Admin.api("DELETE", "/api/rsc/" + id)
          : Admin.api("PATCH", "/api/rsc/" + id, { published: action === "publish" });
        return call.catch(function (e) { failed.push(id + ": " + e.message); });
      });
    }, Promise.resolve());
    step.then(function () {
      if (failed.length) {
        Admin.say(status, _("Not done for {failed} of {n}: {reasons}", { failed: failed.length, n: ids.length, reasons: failed.join("; ") }), "error");
      } else {
        window.location.reload();
      }
    });
  });
})();

// Categories: drag to move (SortableJS), or the keyboard form on each row.
(function () {
  var tree = document.getElementById("category-tree");
  if (!tree) return;
  var status = document.getElementById("category-status");
  function place(name, parent, position) {
    Admin.say(status, _("Moving {name}…", { name: name }));
    return Admin.api("PATCH", "/api/categories/" + encodeURIComponent(name), { parent: parent || null, position: position })
      .then(function () { window.location.reload(); })
      .catch(function (e) { Admin.say(status, _("Not moved: {reason}", { reason: e.message }), "error"); });
  }
  if (window.Sortable) {
    tree.querySelectorAll("ul.categories").forEach(function (list) {
      window.Sortable.create(list, {
        group: "categories",
        handle: ".drag",
        fallbackOnBody: true,
        forceFallback: true,
        onEnd: function (evt) {
          if (evt.from === evt.to && evt.oldIndex === evt.newIndex) return;
          var parent = evt.to.dataset.parent || null;
          place(evt.item.dataset.name, parent, evt.newIndex);
        },
      });
    });
  }
  Admin.on("form.move-category", "submit", function (event) {
    event.preventDefault();
    var f = event.currentTarget;
    place(f.dataset.name, f.parent.value, null);
  });
  Admin.on("button.category-up, button.category-down", "click", function (event) {
    var b = event.currentTarget;
    var position = Number(b.dataset.index) + (b.classList.contains("category-up") ? -1 : 1);
    if (position < 0) return;
    place(b.dataset.name, b.dataset.parent, position);
  });
  var add = document.getElementById("new-category");
  if (add) add.addEventListener("submit", function (event) {
    event.preventDefault();
    Admin.api("POST", "/api/categories", { name: add.name.value.trim(), title: add.title.value.trim(), parent: add.parent.value || null })
      .then(function () { window.location.reload(); })
      .catch(function (e) { Admin.say(status, _("Not added: {reason}", { reason: e.message }), "error"); });
  });
})();

// Predicates: which categories each may connect.
(function () {
  var list = document.getElementById("predicate-list");
  if (!list) return;
  var status = document.getElementById("predicate-status");
  var options = document.getElementById("category-options");
  function picked(select) {
    return Array.prototype.filter.call(select.options, function (o) { return o.selected; }).map(function (o) { return o.value; });
  }
  function chooser(label, name, predicate, chosen) {
    var l = document.createElement("label");
    l.textContent = label + " ";
    var select = document.createElement("select");
    select.name = name;
    select.multiple = true;
    select.size = 6;
    select.setAttribute("aria-label", _("{label} of {predicate}", { label: label, predicate: predicate }));
    select.appendChild(options.content.cloneNode(true));
    Array.prototype.forEach.call(select.options, function (o) { o.selected = chosen.indexOf(o.value) >= 0; });
    l.appendChild(select);
    return l;
  }
  function form(p) {
    var f = document.createElement("form");
    f.className = "predicate card";
    f.dataset.name = p.name;
    var h = document.createElement("h2");
    h.textContent = (p.title || p.name) + " ";
    var code = document.createElement("code");
    code.textContent = p.name;
    h.appendChild(code);
    f.appendChild(h);
    var columns = document.createElement("div");
    columns.className = "columns";
    columns.appendChild(chooser(_("Subjects (from)"), "subjects", p.name, p.subjects));
    columns.appendChild(chooser(_("Objects (to)"), "objects", p.name, p.objects));
    f.appendChild(columns);
    var save = document.createElement("button");
    save.type = "submit";
    save.textContent = _("Save");
    save.setAttribute("aria-label", _("Save {name}", { name: p.name }));
    save.disabled = !p.may_change;
    f.appendChild(save);
    f.addEventListener("submit", function (event) {
      event.preventDefault();
      Admin.api("PATCH", "/api/predicates/" + encodeURIComponent(p.name), { subjects: picked(f.subjects), objects: picked(f.objects) })
        .then(function () { Admin.say(status, _("Saved {name}.", { name: p.name }), "ok"); })
        .catch(function (e) { Admin.say(status, _("Not saved: {reason}", { reason: e.message }), "error"); });
    });
    return f;
  }
  Admin.api("GET", "/api/predicates").then(function (answer) {
    answer.predicates.forEach(function (p) { list.appendChild(form(p)); });
  }).catch(function (e) { Admin.say(status, _("Could not load the predicates: {reason}", { reason: e.message }), "error"); });
})();

// Users and groups: membership checkboxes, and a new user.
(function () {
  var status = document.getElementById("users-status");
  if (!status) return;
  Admin.on("input.membership", "change", function (event) {
    var box = event.currentTarget;
    var person = box.dataset.person, group = box.dataset.group;
    var call = box.checked
      ? Admin.api("POST", "/api/rsc/" + person + "/edges", { predicate: "hasusergroup", object: Number(group) })
      : Admin.api("DELETE", "/api/rsc/" + person + "/edges/hasusergroup/" + group);
    call.then(function () {
      var names = { user: box.dataset.username, group: box.dataset.groupName };
      Admin.say(status, box.checked ? _("Added {user} to {group}.", names) : _("Removed {user} from {group}.", names), "ok");
    }).catch(function (e) {
      box.checked = !box.checked;
      Admin.say(status, _("Not changed: {reason}", { reason: e.message }), "error");
    });
  });
  var add = document.getElementById("new-user");
  if (add) add.addEventListener("submit", function (event) {
    event.preventDefault();
    Admin.api("POST", "/api/auth/users", {
      username: add.username.value.trim(), password: add.password.value,
      group: add.group.value, email: add.email.value.trim() || null,
    }).then(function () { window.location.reload(); })
      .catch(function (e) { Admin.say(status, _("Not added: {reason}", { reason: e.message }), "error"); });
  });
})();

// Access rules: a table edited in place, saved as a whole.
(function () {
  var form = document.getElementById("rules");
  if (!form) return;
  var status = document.getElementById("rules-status");
  var body = form.querySelector("tbody");
  var template = document.getElementById("rule-row");
  var ACTIONS = ["view", "insert", "update", "delete", "link"];
  function addRow(rule) {
    var row = template.content.firstElementChild.cloneNode(true);
    row.querySelector(".rule-group").value = rule.group || "anonymous";
    ACTIONS.forEach(function (a) {
      row.querySelector('.rule-action[value="' + a + '"]').checked = (rule.actions || []).indexOf(a) >= 0;
    });
    row.querySelector(".rule-content-group").value = rule.content_group || "";
    row.querySelector(".rule-categories").value = (rule.categories || []).join(", ");
    row.querySelector(".rule-own").checked = !!rule.own;
    row.querySelector(".remove-rule").addEventListener("click", function () { row.remove(); });
    body.appendChild(row);
  }
  function load() {
    return Admin.api("GET", "/api/access/rules").then(function (answer) {
      body.innerHTML = "";
      answer.rules.forEach(addRow);
      document.getElementById("rules-source").textContent = answer.stored
        ? _("These rules are kept in the site's database.")
        : _("These are the rules of site.toml (or the defaults): saving keeps a copy in the database.");
    });
  }
  function read() {
    return Array.prototype.map.call(body.querySelectorAll("tr"), function (row) {
      var rule = {
        group: row.querySelector(".rule-group").value,
        actions: Array.prototype.filter.call(row.querySelectorAll(".rule-action"), function (b) { return b.checked; })
          .map(function (b) { return b.value; }),
      };
      var cg = row.querySelector(".rule-content-group").value.trim();
      if (cg) rule.content_group = cg;
      var cats = row.querySelector(".rule-categories").value.split(",").map(function (c) { return c.trim(); })
        .filter(function (c) { return c; });
      if (cats.length) rule.categories = cats;
      if (row.querySelector(".rule-own").checked) rule.own = true;
      return rule;
    });
  }
  document.getElementById("add-rule").addEventListener("click", function () { addRow({ actions: ["view"] }); });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    Admin.say(status, _("Saving…"));
    Admin.api("PUT", "/api/access/rules", { rules: read() })
      .then(load)
      .then(function () { Admin.say(status, _("Saved: the new rules are in force."), "ok"); })
      .catch(function (e) { Admin.say(status, _("Not saved: {reason}", { reason: e.message }), "error"); });
  });
  document.getElementById("forget-rules").addEventListener("click", function () {
    if (!window.confirm(_("Forget the stored rules and go back to site.toml's (or the defaults)?"))) return;
    Admin.api("DELETE", "/api/access/rules")
      .then(load)
      .then(function () { Admin.say(status, _("The stored rules are gone: site.toml's apply."), "ok"); })
      .catch(function (e) { Admin.say(status, _("Not done: {reason}", { reason: e.message }), "error"); });
  });
  load().catch(function (e) { Admin.say(status, _("Could not load the rules: {reason}", { reason: e.message }), "error"); });
})();

// Settings: change, add, remove.
(function () {
  var list = document.getElementById("settings-list");
  if (!list) return;
  var status = document.getElementById("settings-status");
  function save(settings, done) {
    return Admin.api("PATCH", "/api/config", { settings: settings })
      .then(function (answer) { Admin.say(status, done, "ok"); show(answer); })
      .catch(function (e) { Admin.say(status, _("Not saved: {reason}", { reason: e.message }), "error"); });
  }
  function row(setting) {
    var f = document.createElement("form");
    f.className = "setting";
    var label = document.createElement("label");
    var name = document.createElement("code");
    name.textContent = setting.key;
    label.appendChild(name);
    label.appendChild(document.createTextNode(" "));
    var input = document.createElement("input");
    input.name = "value";
    input.value = setting.value;
    input.readOnly = !setting.changeable;
    label.appendChild(input);
    f.appendChild(label);
    if (setting.changeable) {
      var ok = document.createElement("button");
      ok.type = "submit";
      ok.textContent = _("Save");
      ok.setAttribute("aria-label", _("Save {name}", { name: setting.key }));
      var remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = _("Remove");
      remove.setAttribute("aria-label", _("Remove {name}", { name: setting.key }));
      remove.addEventListener("click", function () {
        if (!window.confirm(_("Remove the setting {name}?", { name: setting.key }))) return;
        var s = {};
        s[setting.key] = null;
        save(s, _("Removed {name}.", { name: setting.key }));
      });
      f.appendChild(ok);
      f.appendChild(remove);
      f.addEventListener("submit", function (event) {
        event.preventDefault();
        var s = {};
        s[setting.key] = input.value;
        save(s, _("Saved {name}.", { name: setting.key }));
      });
    } else {
      var note = document.createElement("small");
      note.textContent = " " + _("(kept by Bulwark)");
      f.appendChild(note);
    }
    return f;
  }
  function show(answer) {
    list.innerHTML = "";
    answer.settings.forEach(function (setting) { list.appendChild(row(setting)); });
    if (!answer.settings.length) list.textContent = _("No settings yet.");
  }
  Admin.api("GET", "/api/config").then(show)
    .catch(function (e) { Admin.say(status, _("Could not load the settings: {reason}", { reason: e.message }), "error"); });
  var add = document.getElementById("new-setting");
  add.addEventListener("submit", function (event) {
    event.preventDefault();
    var s = {}, key = add.key.value.trim();
    s[key] = add.value.value;
    save(s, _("Added {name}.", { name: key })).then(function () { add.reset(); });
  });
})();

// Cache: purge a page, what shows a resource, or everything.
(function () {
  var status = document.getElementById("cache-status");
  if (!status) return;
  function purge(body, done) {
    Admin.api("POST", "/api/cache", body)
      .then(function () { Admin.say(status, done, "ok"); })
      .catch(function (e) { Admin.say(status, _("Not purged: {reason}", { reason: e.message }), "error"); });
  }
  document.getElementById("purge-url").addEventListener("submit", function (event) {
    event.preventDefault();
    var url = event.currentTarget.url.value.trim();
    purge({ url: url }, _("Purged {url}: its next visitor gets a fresh render.", { url: url }));
  });
  document.getElementById("purge-resource").addEventListener("submit", function (event) {
    event.preventDefault();
    var id = Number(event.currentTarget.resource.value);
    purge({ resource: id }, _("Purged everything that shows resource {id}.", { id: id }));
  });
  document.getElementById("purge-all").addEventListener("submit", function (event) {
    event.preventDefault();
    if (!window.confirm(_("Flush every cached page and value of this site? The next requests all render."))) return;
    purge({ all: true }, _("Flushed the whole site's caches."));
  });
})();

// Backups: make one, list, restore with a confirmation.
(function () {
  var list = document.getElementById("backup-list");
  if (!list) return;
  var status = document.getElementById("backups-status");
  var site = list.dataset.site;
  function size(n) { return n > 1048576 ? (n / 1048576).toFixed(1) + " MB" : Math.ceil(n / 1024) + " KB"; }
  function load() {
    return Admin.api("GET", "/api/backups").then(function (answer) {
      list.innerHTML = "";
      if (!answer.backups.length) {
        list.innerHTML = '<tr><td colspan="4"></td></tr>';
        list.querySelector("td").textContent = _("No backups yet.");
      }
      answer.backups.forEach(function (b) {
        var row = document.createElement("tr");
        var name = document.createElement("td");
        var link = document.createElement("a");
        link.href = "/api/backups/" + encodeURIComponent(b.name);
        link.textContent = b.name;
        link.setAttribute("download", b.name);
        name.appendChild(link);
        var made = document.createElement("td");
        made.textContent = new Date(b.created).toLocaleString();
        made.className = "wide";
        var bytes = document.createElement("td");
        bytes.textContent = size(b.size);
        var act = document.createElement("td");
        var restore = document.createElement("button");
        restore.type = "button";
        restore.textContent = _("Restore…");
        restore.setAttribute("aria-label", _("Restore {name}", { name: b.name }));
        restore.addEventListener("click", function () { ask(b.name); });
        act.appendChild(restore);
        [name, made, bytes, act].forEach(function (c) { row.appendChild(c); });
        list.appendChild(row);
      });
    });
  }
  var dialog = document.getElementById("restore-dialog");
  function ask(name) {
    dialog.querySelector(".backup-name").textContent = name;
    dialog.dataset.name = name;
    dialog.querySelector("input").value = "";
    dialog.showModal();
  }
  dialog.querySelector("form").addEventListener("submit", function (event) {
    var typed = dialog.querySelector("input").value;
    if (event.submitter && event.submitter.value === "cancel") return;
    event.preventDefault();
    if (typed !== site) {
      Admin.say(dialog.querySelector(".message"), _("Type the site's name, {site}, to restore.", { site: site }), "error");
      return;
    }
    dialog.close();
    Admin.say(status, _("Restoring {name}…", { name: dialog.dataset.name }));
    Admin.api("POST", "/api/backups/" + encodeURIComponent(dialog.dataset.name) + "/restore", { confirm: typed })
      .then(function () { Admin.say(status, _("Restored {name}. The site shows it now.", { name: dialog.dataset.name }), "ok"); })
      .catch(function (e) { Admin.say(status, _("Not restored: {reason}", { reason: e.message }), "error"); });
  });
  document.getElementById("make-backup").addEventListener("click", function () {
    Admin.say(status, _("Making a backup…"));
    Admin.api("POST", "/api/backups")
      .then(function (b) { Admin.say(status, _("Made {name} ({size}).", { name: b.name, size: size(b.size) }), "ok"); return load(); })
      .catch(function (e) { Admin.say(status, _("No backup made: {reason}", { reason: e.message }), "error"); });
  });
  load().catch(function (e) { Admin.say(status, _("Could not list the backups: {reason}", { reason: e.message }), "error"); });
})();

// Several nodes' figures of one second as one: each count summed, and the
// page cache's hit ratio the nodes' weighed by their requests.
Admin.sumFigures = function (all) {
  function sum(list, get) {
    return list.reduce(function (total, f) { return total + (get(f) || 0); }, 0);
  }
  var asked = all.filter(function (f) { return f.page_cache_hit_ratio !== null; });
  var weight = sum(asked, function (f) { return f.requests_per_s; });
  var ratio = asked.length === 0 ? null : weight > 0
    ? sum(asked, function (f) { return f.page_cache_hit_ratio * f.requests_per_s; }) / weight
    : sum(asked, function (f) { return f.page_cache_hit_ratio; }) / asked.length;
  var clients = all.filter(function (f) { return f.more.push_clients !== undefined; });
  var refused = {};
  all.forEach(function (f) {
    Object.keys(f.refused).forEach(function (k) { refused[k] = (refused[k] || 0) + f.refused[k]; });
  });
  return {
    requests_per_s: sum(all, function (f) { return f.requests_per_s; }),
    renders_per_s: sum(all, function (f) { return f.renders_per_s; }),
    page_cache_hit_ratio: ratio,
    database: {
      busy: sum(all, function (f) { return f.database.busy; }),
      open: sum(all, function (f) { return f.database.open; }),
    },
    more: clients.length === 0 ? {} : { push_clients: sum(clients, function (f) { return f.more.push_clients; }) },
    refused: refused,
  };
};

// Dashboard: the site's figures, pushed once a second on admin/figures.
// (After the page's own scripts, which bring the push client.)
document.addEventListener("DOMContentLoaded", function () {
  var list = document.getElementById("figures");
  if (!list || !window.Bulwark || !window.Bulwark.push) return;
  var status = document.getElementById("figures-status");
  function number(n, digits) {
    return n.toLocaleString(undefined, { maximumFractionDigits: digits });
  }
  // The last two minutes of each figure, drawn under it as a small line.
  var HISTORY = 120;
  var history = {};
  var SVG = "http://www.w3.org/2000/svg";
  function show(name, text, value) {
    var dd = list.querySelector('[data-figure="' + name + '"]');
    if (!dd) return;
    dd.textContent = text;
    if (typeof value !== "number" || !isFinite(value)) return;
    var values = history[name] || (history[name] = []);
    values.push(value);
    if (values.length > HISTORY) values.shift();
    var svg = dd.parentNode.querySelector("svg");
    if (!svg) {
      svg = document.createElementNS(SVG, "svg");
      svg.setAttribute("aria-hidden", "true");
      svg.setAttribute("preserveAspectRatio", "none");
      svg.appendChild(document.createElementNS(SVG, "polyline"));
      dd.parentNode.appendChild(svg);
    }
    var top = Math.max.apply(null, values.concat([1e-9]));
    svg.setAttribute("viewBox", "0 0 " + (HISTORY - 1) + " 100");
    var start = HISTORY - values.length;
    svg.firstChild.setAttribute("points", values.map(function (v, i) {
      return (start + i) + "," + (98 - 96 * v / top).toFixed(1);
    }).join(" "));
  }
  // On several nodes each sends its own figures (named by `node`): the
  // dashboard shows the sum of the latest of each node heard from lately.
  var latest = {};
  var push = window.Bulwark.push();
  push.on("reset", function () {});
  push.subscribe("admin/figures", function (one) {
    var now = Date.now();
    latest[one.node || ""] = { at: now, figures: one };
    Object.keys(latest).forEach(function (node) {
      if (now - latest[node].at > 3500) delete latest[node];
    });
    var nodes = Object.keys(latest).sort();
    var f = Admin.sumFigures(nodes.map(function (node) { return latest[node].figures; }));
    show("requests_per_s", number(f.requests_per_s, 1) + "/s", f.requests_per_s);
    show("renders_per_s", number(f.renders_per_s, 1) + "/s", f.renders_per_s);
    show("page_cache_hit_ratio", f.page_cache_hit_ratio === null ? _("no pages asked for") : number(100 * f.page_cache_hit_ratio, 1) + "%",
      f.page_cache_hit_ratio === null ? null : 100 * f.page_cache_hit_ratio);
    show("database", _("{busy} of {open}", { busy: f.database.busy, open: f.database.open }), f.database.busy);
    show("push_clients", f.more.push_clients === undefined ? "–" : number(f.more.push_clients, 0), f.more.push_clients);
    show("refused", Object.keys(f.refused).map(function (k) { return k.replace(/_/g, " ") + ": " + f.refused[k]; }).join(", "));
    var on = nodes.length > 1 ? " " + _("Summed over {n} nodes: {nodes}.", { n: nodes.length, nodes: nodes.join(", ") }) : "";
    Admin.say(status, _("Live, as of {time}.", { time: new Date().toLocaleTimeString() }) + on, "ok");
  });
  push.on("error", function () { Admin.say(status, _("The live figures are not coming in; they resume by themselves."), "error"); });
});

// View the site as a group: a cookie the server obeys for managers only.
(function () {
  var form = document.getElementById("view-as");
  if (!form) return;
  var status = document.getElementById("view-as-status");
  var NAME = "bulwark_view_as";
  function current() {
    var found = document.cookie.split(";").map(function (c) { return c.trim().split("="); })
      .filter(function (kv) { return kv[0] === NAME; })[0];
    return found ? decodeURIComponent(found[1]) : null;
  }
  function show() {
    var group = current();
    Admin.say(status, group ? _("This browser shows the site as {group} see it. The admin is still yours.", { group: group }) : _("This browser shows the site as you see it."), group ? "ok" : "");
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var group = form.elements.group.value;
    document.cookie = NAME + "=" + encodeURIComponent(group) + "; path=/; SameSite=Lax";
    show();
    window.open("/", "_blank", "noopener");
  });
  document.getElementById("view-as-stop").addEventListener("click", function () {
    document.cookie = NAME + "=; path=/; max-age=0; SameSite=Lax";
    show();
  });
  show();
})();

// Modules: which ones the site runs.
(function () {
  var form = document.getElementById("modules");
  if (!form) return;
  var list = document.getElementById("module-list");
  var status = document.getElementById("modules-status");
  function show(answer) {
    list.innerHTML = "";
    answer.modules.forEach(function (m) {
      var li = document.createElement("li");
      var label = document.createElement("label");
      var box = document.createElement("input");
      box.type = "checkbox";
      box.name = "enabled";
      box.value = m.name;
      box.checked = m.enabled;
      box.disabled = !m.changeable;
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + m.name));
      li.appendChild(label);
      if (m.needs.length) {
        var small = document.createElement("small");
        small.textContent = " " + _("needs {modules}", { modules: m.needs.join(", ") });
        li.appendChild(small);
      }
      list.appendChild(li);
    });
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var enabled = Array.prototype.filter.call(form.querySelectorAll('input[name="enabled"]'), function (b) { return b.checked; })
      .map(function (b) { return b.value; });
    Admin.say(status, _("Saving and reloading…"));
    Admin.api("PUT", "/api/modules", { enabled: enabled })
      .then(function (answer) { show(answer); Admin.say(status, _("Saved: the site now runs {modules}.", { modules: enabled.join(", ") }), "ok"); })
      .catch(function (e) { Admin.say(status, _("Not changed: {reason}", { reason: e.message }), "error"); });
  });
  Admin.api("GET", "/api/modules").then(show)
    .catch(function (e) { Admin.say(status, _("Could not load the modules: {reason}", { reason: e.message }), "error"); });
})();

// New resource: made as a draft, then edited.
(function () {
  var form = document.getElementById("new-resource");
  if (!form) return;
  var status = document.getElementById("new-status");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    Admin.say(status, _("Making it…"));
    Admin.api("POST", "/api/rsc", { category: form.elements.category.value, props: { title: form.elements.title.value } })
      .then(function (made) { window.location.href = "/admin/edit/" + made.id; })
      .catch(function (e) { Admin.say(status, _("Not made: {reason}", { reason: e.message }), "error"); });
  });
})();

// Stored text is sanitised HTML (crates/store/src/sanitize.rs): a title
// `Tom &amp; Jerry`, a summary or body with markup. A form field is written
// with the stored source itself (the `source` filter), and these two keep it
// so: a field whose source has no markup shows its text (`Tom & Jerry`) and
// gives back that text escaped, which stores as the same bytes; a source with
// markup (a body, an imported summary) is shown and given back as it is.
// Reading and writing a field without a change thus changes nothing.
Admin.showStored = function (field) {
  field.dataset.stored = /</.test(field.value) ? "html" : "text";
  if (field.dataset.stored === "text") field.value = Admin.storedText(field.value);
};
// Text as the store keeps text: `&`, `<` and `>` escaped.
Admin.escapeText = function (text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
};
Admin.storedValue = function (field) {
  return field.dataset.stored === "text" ? Admin.escapeText(field.value) : field.value;
};
// The text of a stored text value (a title from the API), as a field shows it.
Admin.storedText = function (stored) {
  var decoder = document.createElement("textarea");
  decoder.innerHTML = stored || "";
  return decoder.value;
};

// Dashboard: the comments waiting for moderation (with the comments module),
// how many and the newest five, each linked to its page.
(function () {
  var card = document.getElementById("comments-waiting");
  if (!card) return;
  var badge = card.querySelector("[data-waiting]");
  var list = card.querySelector("[data-waiting-list]");
  var none = card.querySelector("[data-waiting-none]");
  Admin.api("GET", "/api/comments?status=pending&limit=5").then(function (answer) {
    var waiting = (answer.counts && answer.counts.pending) || 0;
    badge.textContent = String(waiting);
    none.hidden = waiting > 0;
    answer.comments.forEach(function (c) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "/admin/comments";
      // The body's text, read in an inert document (nothing in it loads or runs).
      var text = new DOMParser().parseFromString(c.body || "", "text/html").body.textContent;
      a.textContent = (Admin.storedText(c.name) || _("someone")) + ": " + text.slice(0, 80);
      li.appendChild(a);
      list.appendChild(li);
    });
  }).catch(function () { badge.textContent = "?"; });
})();

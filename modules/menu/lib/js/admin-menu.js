// The Menus screen: a new menu is a resource of the category "menu" named
// menu_<name>, made through the JSON API; its editor opens on it.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var form = document.getElementById("new-menu");
  if (!form) return;
  var status = document.getElementById("new-menu-status");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    Admin.api("POST", "/api/rsc", {
      category: "menu",
      name: "menu_" + form.elements.name.value.trim(),
      published: true,
      props: { title: form.elements.title.value.trim(), menu: [] },
    })
      .then(function (made) { window.location.href = "/admin/edit/" + made.id; })
      .catch(function (e) { Admin.say(status, _("Not made: {why}", { why: e.message }), "error"); });
  });
});

// The menu editor (the menu module's part of the resource editor): a tree of
// items moved by dragging (SortableJS, nested lists) or by each item's
// buttons, added from a search or as a link, and saved into the resource's
// `menu` property with PATCH /api/rsc/{id} (If-Match the editor's version, so
// a change saved elsewhere meanwhile is refused, not overwritten).
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var section = document.getElementById("menu-editor");
  if (!section) return;
  var id = section.dataset.id;
  var tree = document.getElementById("menu-tree");
  var status = document.getElementById("menu-status");
  var empty = document.getElementById("menu-empty");
  var editor = document.getElementById("editor");
  var changed = false;

  function say(text, kind) { Admin.say(status, text, kind); }
  function label(li) { return li.querySelector(".menu-label").textContent.trim(); }

  function button(text, name, action) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.action = action;
    b.setAttribute("aria-label", name);
    return b;
  }

  // Each item gets its buttons, and its list of children a Sortable.
  function prepare(li) {
    var row = li.querySelector(".menu-row");
    if (!row.querySelector(".row-actions")) {
      var name = label(li);
      var actions = document.createElement("span");
      actions.className = "row-actions";
      actions.append(
        button("↑", _("Move {name} up", { name: name }), "up"),
        button("↓", _("Move {name} down", { name: name }), "down"),
        button("→", _("Put {name} under the item above", { name: name }), "in"),
        button("←", _("Take {name} out of its parent", { name: name }), "out"),
        button(_("Remove"), _("Remove {name}", { name: name }), "remove"));
      row.appendChild(actions);
    }
    sortable(li.querySelector(".menu-children"));
  }
  function sortable(list) {
    if (!window.Sortable || list.dataset.sortable) return;
    list.dataset.sortable = "1";
    window.Sortable.create(list, {
      group: "menu", handle: ".drag", animation: 120, fallbackOnBody: true,
      swapThreshold: 0.65, onEnd: function () { touched(_("Moved.")); },
    });
  }
  function touched(text) {
    changed = true;
    empty.hidden = tree.children.length > 0;
    say(_("{change} Not saved yet.", { change: text }), "");
  }
  function items(list) {
    return Array.prototype.filter.call(list.children, function (el) { return el.matches("li.menu-item"); });
  }

  sortable(tree);
  tree.querySelectorAll("li.menu-item").forEach(prepare);
  empty.hidden = tree.children.length > 0;

  // The buttons: the same moves as dragging, and the focus stays on the item.
  tree.addEventListener("click", function (event) {
    var b = event.target.closest("button[data-action]");
    if (!b) return;
    var li = b.closest("li.menu-item");
    var list = li.parentElement;
    var before = li.previousElementSibling;
    var after = li.nextElementSibling;
    var parent = list.closest("li.menu-item");
    switch (b.dataset.action) {
      case "up": if (before) list.insertBefore(li, before); break;
      case "down": if (after) list.insertBefore(after, li); break;
      case "in": if (before) before.querySelector(".menu-children").appendChild(li); break;
      case "out": if (parent) parent.parentElement.insertBefore(li, parent.nextElementSibling); break;
      case "remove":
        var next = after || before || parent;
        li.remove();
        touched(_("Removed {name}.", { name: label(li) }));
        if (next) next.querySelector("button").focus();
        return;
    }
    touched(_("Moved {name}.", { name: label(li) }));
    b.focus();
  });

  function add(item, text, detail) {
    var li = document.createElement("li");
    li.className = "menu-item";
    if (item.id) li.dataset.id = item.id;
    li.dataset.title = item.title || "";
    li.dataset.url = item.url || "";
    var row = document.createElement("div");
    row.className = "menu-row";
    var drag = document.createElement("span");
    drag.className = "drag";
    drag.setAttribute("aria-hidden", "true");
    drag.textContent = "⠿";
    var name = document.createElement("span");
    name.className = "menu-label";
    name.textContent = text;
    var small = document.createElement("small");
    small.className = "muted";
    small.textContent = detail;
    row.append(drag, " ", name, " ", small);
    var children = document.createElement("ol");
    children.className = "menu-children";
    li.append(row, children);
    tree.appendChild(li);
    prepare(li);
    touched(_("Added {name}.", { name: text }));
  }

  var finder = document.getElementById("menu-add-page");
  var found = document.getElementById("menu-candidates");
  finder.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = finder.elements.text.value.trim();
    found.replaceChildren();
    // Pages and articles (the text categories) first, then anything else
    // found; each with its category, so a picture is never taken for a page.
    var q = "/api/search?pagelen=10&text=" + encodeURIComponent(text);
    Promise.all([Admin.api("GET", q + "&cat=text"), Admin.api("GET", q)])
      .then(function (answers) {
        var seen = {};
        var results = (answers[0].items || []).concat(answers[1].items || []).filter(function (r) {
          if (seen[r.id]) return false;
          seen[r.id] = true;
          return true;
        }).slice(0, 10);
        if (results.length === 0) say(_("Nothing found for “{text}”.", { text: text }), "");
        results.forEach(function (r) {
          var li = document.createElement("li");
          var title = Admin.storedText(r.props && r.props.title) || _("(untitled)");
          var b = button(_("Add {title}", { title: title }), _("Add {title} ({category}) to the menu", { title: title, category: r.category }), "add");
          b.addEventListener("click", function () {
            add({ id: r.id }, title, _("page {id}", { id: r.id }));
            found.replaceChildren();
            finder.elements.text.focus();
          });
          li.appendChild(b);
          var kind = document.createElement("small");
          kind.className = "muted category";
          kind.textContent = " " + r.category;
          li.appendChild(kind);
          found.appendChild(li);
        });
      })
      .catch(function (e) { say(_("Could not search: {why}", { why: e.message }), "error"); });
  });

  var linker = document.getElementById("menu-add-link");
  linker.addEventListener("submit", function (event) {
    event.preventDefault();
    var title = linker.elements.title.value.trim();
    var url = linker.elements.url.value.trim();
    if (!/^(\/|https?:\/\/|mailto:|#)/i.test(url)) {
      say(_("An address starts with / (a page of this site), http://, https:// or mailto:."), "error");
      linker.elements.url.focus();
      return;
    }
    add({ title: title, url: url }, title, url);
    linker.reset();
    linker.elements.title.focus();
  });

  // The tree as the `menu` property keeps it.
  function serialise(list) {
    return items(list).map(function (li) {
      var item = li.dataset.id ? { id: Number(li.dataset.id) } : { title: li.dataset.title, url: li.dataset.url };
      if (li.dataset.id && li.dataset.title) item.title = li.dataset.title;
      var children = serialise(li.querySelector(".menu-children"));
      if (children.length) item.children = children;
      return item;
    });
  }

  document.getElementById("menu-save").addEventListener("click", function () {
    say(_("Saving…"), "");
    Admin.api("PATCH", "/api/rsc/" + id, { props: { menu: serialise(tree) } }, { ifMatch: editor.dataset.version })
      .then(function (saved) {
        editor.dataset.version = saved.version;
        changed = false;
        say(_("Saved the menu."), "ok");
        Admin.toast(_("Saved the menu."));
      })
      .catch(function (e) {
        if (e.status === 409 || e.status === 412) {
          say(_("Not saved: someone else changed this menu meanwhile. Reload the page to see theirs (yours is lost then), or save the rest first."), "error");
        } else {
          say(_("Not saved: {why}", { why: e.message }), "error");
        }
      });
  });

  // Leaving with a changed menu asks first, as the editor's form does.
  window.addEventListener("beforeunload", function (event) {
    if (!changed) return;
    event.preventDefault();
    event.returnValue = "";
  });
});

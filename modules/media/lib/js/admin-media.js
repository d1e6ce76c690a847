// Media: uploads by drag and drop or the file picker, each with its progress
// (the upload is streamed to the server, which reads the type from the
// content and says why when it refuses), and the editor's picture picker.
(function () {
  // Sends one file to /media/upload; onProgress gets fractions 0..1.
  function upload(file, onProgress) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/media/upload");
      xhr.setRequestHeader("X-CSRF-Token", Admin.csrf);
      xhr.upload.onprogress = function (e) {
        if (e.lengthComputable) onProgress(e.loaded / e.total);
      };
      xhr.onload = function () {
        var answer = null;
        try { answer = JSON.parse(xhr.responseText); } catch (e) { answer = null; }
        if (xhr.status === 201 && answer) return resolve(answer);
        var why = answer && answer.detail ? answer.detail : xhr.status + " " + xhr.statusText;
        if (xhr.status === 503) why = _("the server is busy; try again in a moment");
        reject(new Error(why));
      };
      xhr.onerror = function () { reject(new Error(_("the upload broke off; try again"))); };
      var form = new FormData();
      form.append("file", file);
      xhr.send(form);
    });
  }

  // A part of the editor as the server renders it now, put in place of the
  // one shown: the rest of the page, and whatever is typed in its form, is
  // left as it is (a reload would throw unsaved text away).
  function refresh(elementId) {
    return fetch(location.href, { credentials: "same-origin" })
      .then(function (res) {
        if (!res.ok) throw new Error(res.status + " " + res.statusText);
        return res.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(elementId);
        var shown = document.getElementById(elementId);
        if (!fresh || !shown) throw new Error(_("the page has no {id}", { id: elementId }));
        var placed = document.importNode(fresh, true);
        shown.replaceWith(placed);
        return placed;
      });
  }

  var zone = document.getElementById("dropzone");
  if (zone) {
    var list = document.getElementById("uploads");
    var grid = document.getElementById("media-grid");
    var send = function (files) {
      Array.prototype.forEach.call(files, function (file) {
        var li = document.createElement("li");
        var name = document.createElement("span");
        name.textContent = file.name + " ";
        var bar = document.createElement("progress");
        bar.max = 1;
        bar.value = 0;
        bar.setAttribute("aria-label", _("Uploading {name}", { name: file.name }));
        var status = document.createElement("span");
        status.className = "message";
        li.append(name, bar, status);
        list.appendChild(li);
        upload(file, function (f) { bar.value = f; }).then(function (made) {
          bar.value = 1;
          status.textContent = " " + _("uploaded");
          status.className = "message ok";
          var empty = document.getElementById("media-empty");
          if (empty) empty.remove();
          var item = document.createElement("li");
          var a = document.createElement("a");
          a.href = "/admin/edit/" + made.id;
          if (made.category === "image") {
            var img = document.createElement("img");
            img.src = made.url;
            img.alt = file.name;
            img.width = 200;
            img.className = "uploaded";
            a.appendChild(img);
          }
          var title = document.createElement("span");
          title.className = "media-title";
          title.textContent = file.name;
          a.appendChild(title);
          item.appendChild(a);
          grid.insertBefore(item, grid.firstChild);
          var count = document.getElementById("media-count");
          if (count) count.textContent = String(Number(count.textContent) + 1);
        }).catch(function (e) {
          status.textContent = " " + _("not uploaded: {why}", { why: e.message });
          status.className = "message error";
        });
      });
    };
    document.getElementById("files").addEventListener("change", function (e) {
      send(e.target.files);
      e.target.value = "";
    });
    ["dragenter", "dragover"].forEach(function (type) {
      zone.addEventListener(type, function (e) {
        e.preventDefault();
        zone.classList.add("over");
      });
    });
    ["dragleave", "drop"].forEach(function (type) {
      zone.addEventListener(type, function (e) {
        e.preventDefault();
        zone.classList.remove("over");
      });
    });
    zone.addEventListener("drop", function (e) {
      if (e.dataTransfer && e.dataTransfer.files.length) send(e.dataTransfer.files);
    });
  }

  // An image's focal point: a click on the picture, or the two numbers.
  var focus = document.getElementById("focus-form");
  if (focus) {
    var editor = document.getElementById("editor");
    var image = document.getElementById("focus-image");
    var mark = document.getElementById("focus-mark");
    var focusStatus = document.getElementById("focus-status");
    // Placed from script: the site's CSP allows no inline style attributes.
    mark.style.left = focus.elements.x.value + "%";
    mark.style.top = focus.elements.y.value + "%";
    mark.hidden = false;
    var saveFocus = function () {
      var x = Number(focus.elements.x.value) / 100;
      var y = Number(focus.elements.y.value) / 100;
      if (!(x >= 0 && x <= 1 && y >= 0 && y <= 1)) {
        Admin.say(focusStatus, _("Give both as 0 to 100 per cent."), "error");
        return;
      }
      mark.style.left = x * 100 + "%";
      mark.style.top = y * 100 + "%";
      Admin.say(focusStatus, _("Saving…"));
      fetch("/api/rsc/" + focus.closest("section").dataset.id, {
        method: "PATCH",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          "If-Match": '"' + editor.dataset.version + '"',
          "X-CSRF-Token": Admin.csrf,
        },
        body: JSON.stringify({ props: { focus_x: x, focus_y: y } }),
      }).then(function (res) {
        return res.json().then(function (answer) {
          if (res.ok) {
            // The editor's form saves against the version this made.
            editor.dataset.version = answer.version;
            return refresh("focus-preview").then(function () {
              Admin.say(focusStatus, _("Saved: the crops follow the new focal point."), "ok");
            });
          } else if (res.status === 409) {
            Admin.say(focusStatus, _("Someone else changed this since you opened it: reload, then set it again."), "error");
          } else {
            Admin.say(focusStatus, _("Not saved: {why}", { why: answer.detail || res.status }), "error");
          }
        });
      }).catch(function () { Admin.say(focusStatus, _("Not saved: the server could not be reached."), "error"); });
    };
    image.addEventListener("click", function (e) {
      var box = image.getBoundingClientRect();
      focus.elements.x.value = (((e.clientX - box.left) / box.width) * 100).toFixed(1);
      focus.elements.y.value = (((e.clientY - box.top) / box.height) * 100).toFixed(1);
      saveFocus();
    });
    focus.addEventListener("submit", function (e) {
      e.preventDefault();
      saveFocus();
    });
  }

  // The editor's picture: one `depiction` connection, chosen from the
  // library or uploaded on the spot. Shown again in place once saved.
  function bindPicker(said, kind) {
    var picker = document.getElementById("depiction");
    if (!picker) return;
    var id = picker.dataset.id;
    var status = document.getElementById("depiction-status");
    if (said) Admin.say(status, said, kind);
    var current = picker.dataset.current ? picker.dataset.current.split(",") : [];
    var choose = function (object) {
      Admin.say(status, _("Saving…"));
      var removals = current.filter(function (o) { return o !== String(object); }).map(function (o) {
        return Admin.api("DELETE", "/api/rsc/" + id + "/edges/depiction/" + o);
      });
      Promise.all(removals).then(function () {
        if (object === null || current.indexOf(String(object)) >= 0) return null;
        return Admin.api("POST", "/api/rsc/" + id + "/edges", { predicate: "depiction", object: Number(object) });
      }).then(function () {
        return refresh("depiction").then(function (placed) {
          bindPicker(object === null ? _("The picture is removed.") : _("The picture is saved."), "ok");
          var heading = placed.querySelector("h2");
          heading.tabIndex = -1;
          heading.focus();
        });
      }).catch(function (e) { Admin.say(status, _("Not saved: {why}", { why: e.message }), "error"); });
    };
    picker.querySelectorAll("button[data-pick]").forEach(function (b) {
      b.addEventListener("click", function () { choose(b.dataset.pick); });
    });
    var none = document.getElementById("depiction-remove");
    if (none) none.addEventListener("click", function () { choose(null); });
    var input = document.getElementById("depiction-file");
    if (input) input.addEventListener("change", function () {
      var file = input.files[0];
      if (!file) return;
      var bar = document.getElementById("depiction-progress");
      bar.hidden = false;
      upload(file, function (f) { bar.value = f; }).then(function (made) {
        choose(made.id);
      }).catch(function (e) { Admin.say(status, _("Not uploaded: {why}", { why: e.message }), "error"); });
    });
  }
  bindPicker();
})();

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
        bar.hidden = true;
        input.value = "";
        if (!current.length) return choose(made.id);
        // There is a picture already: the new one does not silently take
        // its place. It is in the library; the editor says which to use.
        Admin.say(status, _("Uploaded {name} to the library; the picture above stays until you choose.", { name: file.name }), "ok");
        var use = document.createElement("button");
        use.type = "button";
        use.id = "depiction-use-new";
        use.textContent = _("Use the new one instead");
        use.addEventListener("click", function () { choose(made.id); });
        status.appendChild(document.createTextNode(" "));
        status.appendChild(use);
      }).catch(function (e) { Admin.say(status, _("Not uploaded: {why}", { why: e.message }), "error"); });
    });
  }
  bindPicker();

  // Pictures in the text (the editor's "Picture" button, a file dropped or
  // pasted into the text): a picture of the library or a new upload, with
  // its alternative text (or marked decorative), a caption, its place and
  // size. It goes into the text as a <figure>: an <img> of its medium
  // preview, sized, which the public page writes as a responsive image
  // (pictures() in the templates, docs/media.md).
  // Its own scope: the names above (editor, image...) are the focal point's.
  (function () {
    var body = Admin.bodyEditor;
    var dialog = document.getElementById("picture-dialog");
    if (!body || !dialog) return;
    var editor = body.editor;
    var chosen = null;
    var range = null;
    var pictureStatus = document.getElementById("picture-status");
    var alt = document.getElementById("picture-alt");
    var decorative = document.getElementById("picture-decorative");
    var caption = document.getElementById("picture-caption");
    // The width it is shown at, by size (the text column is about 45 rem).
    var widths = { small: 320, medium: 640, large: 960 };
    function choose(button) {
      dialog.querySelectorAll("#picture-choices button").forEach(function (b) {
        b.setAttribute("aria-pressed", String(b === button));
      });
      chosen = {
        id: button.dataset.picture,
        src: button.dataset.src,
        width: Number(button.dataset.width) || 0,
        height: Number(button.dataset.height) || 0,
      };
      if (!alt.value) alt.value = Admin.storedText(button.dataset.alt);
      Admin.say(document.getElementById("picture-chosen"), _("Chosen: {name}.", { name: button.getAttribute("aria-label") }), "ok");
    }
    function bindChoices() {
      dialog.querySelectorAll("#picture-choices button").forEach(function (b) {
        b.addEventListener("click", function () { choose(b); });
      });
    }
    bindChoices();
    // The list again from the server, for the words typed (or the newest
    // pictures); `pick`: the id to choose in it (an upload just made).
    function reload(text, pick) {
      var url = new URL(location.href);
      if (text) url.searchParams.set("picture_text", text); else url.searchParams.delete("picture_text");
      return fetch(url, { credentials: "same-origin" }).then(function (res) {
        if (!res.ok) throw new Error(res.status + " " + res.statusText);
        return res.text();
      }).then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("picture-choices");
        var shown = document.getElementById("picture-choices");
        if (fresh && shown) shown.replaceWith(document.importNode(fresh, true));
        bindChoices();
        if (pick) {
          var b = dialog.querySelector('#picture-choices button[data-picture="' + pick + '"]');
          if (b) choose(b);
        }
      });
    }
    var findTimer = null;
    document.getElementById("picture-find").addEventListener("input", function (e) {
      clearTimeout(findTimer);
      var text = e.target.value.trim();
      findTimer = setTimeout(function () {
        reload(text).catch(function (err) { Admin.say(pictureStatus, err.message, "error"); });
      }, 300);
    });
    function uploadInto(file) {
      var bar = document.getElementById("picture-progress");
      bar.hidden = false;
      bar.value = 0;
      Admin.say(pictureStatus, _("Uploading {name}…", { name: file.name }), "");
      return upload(file, function (f) { bar.value = f; }).then(function (made) {
        bar.hidden = true;
        Admin.say(pictureStatus, _("Uploaded {name}: it is in the library now.", { name: file.name }), "ok");
        document.getElementById("picture-find").value = "";
        return reload("", made.id);
      }).catch(function (e) {
        bar.hidden = true;
        Admin.say(pictureStatus, _("Not uploaded: {why}", { why: e.message }), "error");
      });
    }
    document.getElementById("picture-file").addEventListener("change", function (e) {
      if (e.target.files[0]) uploadInto(e.target.files[0]);
    });
    decorative.addEventListener("change", function () {
      alt.disabled = decorative.checked;
    });
    function open(file) {
      range = editor.getSelection();
      chosen = null;
      alt.value = "";
      alt.disabled = false;
      decorative.checked = false;
      caption.value = "";
      dialog.querySelectorAll("#picture-choices button").forEach(function (b) { b.setAttribute("aria-pressed", "false"); });
      Admin.say(document.getElementById("picture-chosen"), "", "");
      Admin.say(pictureStatus, "", "");
      dialog.returnValue = "";
      // Closed, the dialog gives the focus back to the text (see the link dialog).
      editor.focus();
      dialog.showModal();
      if (file) uploadInto(file); else document.getElementById("picture-find").focus();
    }
    Admin.pictureDialog = function () { open(null); };
    // Inserted on submit, before the dialog closes (its close event comes a
    // task later, when the writing may have gone on).
    document.getElementById("picture-form").addEventListener("submit", function (e) {
      if (e.submitter && e.submitter.value !== "insert") return;
      // Asked, not guessed: a picture, and either words for it or "decorative".
      if (!chosen) {
        e.preventDefault();
        Admin.say(pictureStatus, _("Choose a picture first, or upload one."), "error");
        return;
      }
      if (!decorative.checked && !alt.value.trim()) {
        e.preventDefault();
        Admin.say(pictureStatus, _("Say what the picture shows, or mark it decorative."), "error");
        alt.focus();
        return;
      }
      insert();
    });
    function insert() {
      var size = dialog.querySelector('input[name="size"]:checked').value;
      var align = dialog.querySelector('input[name="align"]:checked').value;
      var width = align === "wide" ? (chosen.width || widths.large) : widths[size];
      if (chosen.width) width = Math.min(width, chosen.width);
      var figure = document.createElement("figure");
      figure.className = "picture align-" + align + (align === "wide" ? "" : " size-" + size);
      var img = document.createElement("img");
      img.src = chosen.src || "/media/file/" + chosen.id;
      img.alt = decorative.checked ? "" : alt.value.trim();
      img.width = width;
      if (chosen.width && chosen.height) img.height = Math.round(width * chosen.height / chosen.width);
      figure.appendChild(img);
      if (caption.value.trim()) {
        var cap = document.createElement("figcaption");
        cap.textContent = caption.value.trim();
        figure.appendChild(cap);
      }
      if (range) editor.setSelection(range);
      // As an element: its HTML would be merged into the paragraph at the
      // cursor (the <img> into the text, the caption on its own).
      editor.insertElement(figure);
      body.changed();
    }
    // A picture dropped or pasted into the text is uploaded, then described.
    function pictureFiles(list) {
      return Array.prototype.filter.call(list || [], function (f) { return /^image\//.test(f.type); });
    }
    function takePicture(e) {
      var carried = e.type === "drop" ? e.dataTransfer : e.clipboardData;
      var files = pictureFiles(carried && carried.files);
      if (!files.length) return;
      e.preventDefault();
      e.stopPropagation();
      open(files[0]);
    }
    body.surface.addEventListener("drop", takePicture, true);
    body.surface.addEventListener("paste", takePicture, true);
  })();
})();

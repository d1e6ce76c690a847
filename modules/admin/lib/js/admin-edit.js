// The admin's editor. Everything goes through the JSON API with the session's
// CSRF token (Admin.api, admin.js): the resource is saved with If-Match (the
// version the page was opened at), so a change someone else saved meanwhile
// comes back as 409 and is shown, never overwritten; edges and revisions have
// their own endpoints.
(function () {
  "use strict";
  var form = document.getElementById("editor");
  if (!form) return;
  var id = form.dataset.id;
  var status = document.getElementById("status");
  function say(text, kind) {
    status.textContent = text;
    status.className = kind || "";
  }

  // The text fields hold the stored source (Admin.showStored): shown as
  // text where it is text, and given back as the same bytes.
  [form.elements.title, form.elements.summary, form.elements.slug].forEach(Admin.showStored);

  // What the body may hold: the server's list (crates/store/src/sanitize.rs),
  // so that what the editor shows is what will be saved. A paste from a word
  // processor is reduced to it: Word's and Google Docs' own markup (styles,
  // classes, <o:p>, the bold wrapper Google Docs puts round everything) goes,
  // bold and italic written as styles become <b> and <i>.
  var allowedTags = ["a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "dd", "del",
    "dl", "dt", "em", "figcaption", "figure", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins",
    "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "small", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul"];
  var allowedAttributes = ["href", "src", "alt", "width", "height", "title", "lang", "class",
    "colspan", "rowspan", "scope", "cite"];
  // The classes the editor itself writes (a picture's placement and size);
  // any other class came with a paste and means nothing here.
  var ownClass = /^(picture|embed|align-(left|right|center|wide)|size-(small|medium|large))$/;
  function cleanHtml(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    doc.querySelectorAll("b[id^='docs-internal-guid'], span[id^='docs-internal-guid']").forEach(function (wrapper) {
      wrapper.replaceWith.apply(wrapper, Array.prototype.slice.call(wrapper.childNodes));
    });
    doc.querySelectorAll("[style]").forEach(function (el) {
      // Read from the attribute: a parsed document has no style objects.
      var style = el.getAttribute("style");
      var bold = /font-weight\s*:\s*(bold|[6-9]00)\b/i.test(style);
      var italic = /font-style\s*:\s*italic\b/i.test(style);
      if (el.nodeName === "SPAN" && (bold || italic)) {
        var inner = doc.createDocumentFragment();
        while (el.firstChild) inner.appendChild(el.firstChild);
        if (bold) { var b = doc.createElement("b"); b.appendChild(inner); inner = b; }
        if (italic) { var i = doc.createElement("i"); i.appendChild(inner); inner = i; }
        el.appendChild(inner);
      }
    });
    doc.body.querySelectorAll("h1").forEach(function (h1) {
      // The page's title is its one <h1>: a pasted one is a heading below it.
      var h2 = doc.createElement("h2");
      while (h1.firstChild) h2.appendChild(h1.firstChild);
      h1.replaceWith(h2);
    });
    doc.body.querySelectorAll("[class]").forEach(function (el) {
      var kept = el.className.split(/\s+/).filter(function (c) { return ownClass.test(c); });
      if (kept.length) el.className = kept.join(" "); else el.removeAttribute("class");
    });
    var fragment = window.DOMPurify.sanitize(doc.body.innerHTML, {
      ALLOWED_TAGS: allowedTags,
      ALLOWED_ATTR: allowedAttributes,
      RETURN_DOM_FRAGMENT: true,
    });
    // Spans left without a class or language carry nothing.
    fragment.querySelectorAll("span:not([class]):not([lang])").forEach(function (span) {
      span.replaceWith.apply(span, Array.prototype.slice.call(span.childNodes));
    });
    return fragment;
  }

  // The link dialog: a page of this site found by words of its title, or an
  // address typed (a web address, an e-mail address, an anchor on the page).
  var linkDialog = document.getElementById("link-dialog");
  var linkForm = document.getElementById("link-form");
  var linkUrl = document.getElementById("link-url");
  var linkFound = document.getElementById("link-found");
  var linkStatus = document.getElementById("link-status");
  var linkRange = null;
  var linkTitle = "";
  function linkTarget(typed) {
    var url = typed.trim();
    if (/^[^\s@\/:]+@[^\s@\/]+\.[^\s@\/]+$/.test(url)) return "mailto:" + url;
    if (/^www\./i.test(url)) return "https://" + url;
    return url;
  }
  function looksLikeAddress(typed) {
    return /^(https?:|mailto:|\/|#)/i.test(typed) || /^www\./i.test(typed) || /@/.test(typed);
  }
  var findTimer = null;
  function findPages() {
    var text = linkUrl.value.trim();
    linkFound.innerHTML = "";
    if (!text || looksLikeAddress(text)) { Admin.say(linkStatus, "", ""); return; }
    var q = "/api/search?pagelen=8&text=" + encodeURIComponent(text);
    Promise.all([Admin.api("GET", q + "&cat=text"), Admin.api("GET", q)]).then(function (answers) {
      if (linkUrl.value.trim() !== text) return;
      var seen = {};
      var found = (answers[0].items || []).concat(answers[1].items || []).filter(function (r) {
        if (seen[r.id] || r.category === "image") return false;
        seen[r.id] = true;
        return true;
      }).slice(0, 8);
      Admin.say(linkStatus, found.length ? _("{n} found: choose one, or go on typing.", { n: found.length })
        : _("Nothing found for “{text}”.", { text: text }), "");
      found.forEach(function (r) {
        var li = document.createElement("li");
        var pick = document.createElement("button");
        pick.type = "button";
        var title = Admin.storedText(r.props && r.props.title) || _("(untitled)");
        pick.textContent = title + " (" + r.category + ")";
        pick.addEventListener("click", function () {
          linkUrl.value = "/page/" + r.id;
          linkTitle = title;
          linkFound.innerHTML = "";
          Admin.say(linkStatus, _("Links to “{title}”.", { title: title }), "ok");
          linkUrl.focus();
        });
        li.appendChild(pick);
        linkFound.appendChild(li);
      });
    }).catch(function (e) { Admin.say(linkStatus, e.message, "error"); });
  }
  if (linkDialog) {
    linkUrl.addEventListener("input", function () {
      linkTitle = "";
      clearTimeout(findTimer);
      findTimer = setTimeout(findPages, 250);
    });
    // Done on submit, before the dialog closes (its close event comes a task
    // later, when the writing may have gone on).
    linkForm.addEventListener("submit", function (event) {
      var choice = event.submitter ? event.submitter.value : "set";
      if (!editor || !linkRange) return;
      try {
        editor.setSelection(linkRange);
        var existing = linkAt(linkRange);
        if (choice === "remove" && existing) {
          var whole = document.createRange();
          whole.selectNodeContents(existing);
          editor.setSelection(whole);
          editor.removeLink();
        }
        if (choice === "set" && linkUrl.value.trim()) {
          var url = linkTarget(linkUrl.value);
          if (existing && linkRange.collapsed) {
            existing.setAttribute("href", url);
          } else if (linkRange.collapsed) {
            // Nothing selected: the link's words are the page's title, or
            // the address itself.
            var a = document.createElement("a");
            a.href = url;
            a.textContent = linkTitle || linkUrl.value.trim();
            editor.insertHTML(a.outerHTML);
          } else {
            editor.makeLink(url);
          }
        }
      } finally {
        // Back to the text, where the writing goes on (not to the toolbar
        // button the dialog was opened with).
        textarea.value = editorHtml();
        editor.focus();
      }
    });
  }
  // The link the cursor is in, if any.
  function linkAt(range) {
    for (var node = range.commonAncestorContainer; node && node !== surface; node = node.parentNode) {
      if (node.nodeName === "A") return node;
    }
    return null;
  }
  function openLinkDialog() {
    linkRange = editor.getSelection();
    var existing = linkAt(linkRange);
    var current = existing ? existing.getAttribute("href") : "";
    linkUrl.value = current || "";
    linkTitle = "";
    linkFound.innerHTML = "";
    Admin.say(linkStatus, "", "");
    document.getElementById("link-remove").hidden = !current;
    linkDialog.returnValue = "";
    // The dialog gives the focus back, when it closes, to what had it when it
    // opened: the text, not the toolbar button (where Enter would open it again).
    editor.focus();
    linkDialog.showModal();
    linkUrl.focus();
  }

  // A video by its address (YouTube, Vimeo): stored as a link in a figure,
  // which the public page shows as the provider's player (embeds(), media).
  var embedDialog = document.getElementById("embed-dialog");
  var embedRange = null;
  var videoAddress = /^https?:\/\/(www\.|m\.)?(youtube\.com\/(watch\?([^#]*&)?v=|shorts\/|embed\/)[\w-]+|youtu\.be\/[\w-]+|vimeo\.com\/\d+)/;
  function openEmbedDialog() {
    embedRange = editor.getSelection();
    document.getElementById("embed-url").value = "";
    document.getElementById("embed-caption").value = "";
    Admin.say(document.getElementById("embed-status"), "", "");
    embedDialog.returnValue = "";
    editor.focus();
    embedDialog.showModal();
    document.getElementById("embed-url").focus();
  }
  if (embedDialog) {
    document.getElementById("embed-form").addEventListener("submit", function (event) {
      if (event.submitter && event.submitter.value !== "insert") return;
      var url = document.getElementById("embed-url").value.trim();
      if (!videoAddress.test(url)) {
        event.preventDefault();
        Admin.say(document.getElementById("embed-status"),
          _("That is not the address of a video on YouTube or Vimeo. Another address can be a link (the Link button)."), "error");
        document.getElementById("embed-url").focus();
        return;
      }
      var figure = document.createElement("figure");
      figure.className = "embed";
      var a = document.createElement("a");
      a.href = url;
      a.textContent = url;
      figure.appendChild(a);
      var caption = document.getElementById("embed-caption").value.trim();
      if (caption) {
        var cap = document.createElement("figcaption");
        cap.textContent = caption;
        figure.appendChild(cap);
      }
      if (embedRange) editor.setSelection(embedRange);
      editor.insertElement(figure);
      textarea.value = editorHtml();
    });
  }

  // Rich text: Squire on a div, the textarea kept for the HTML source (and
  // as what is saved). What goes into the editor (a paste from Word or
  // Google Docs, a dropped page, stored HTML) is cleaned here to the tags and
  // attributes the server keeps (cleanHtml); the server cleans it
  // again on save.
  var textarea = document.getElementById("body");
  var surface = document.getElementById("body-editor");
  var toolbar = form.querySelector(".toolbar");
  var editor = null;
  // The editor's HTML as it is saved: without the empty paragraph Squire
  // keeps after a last heading, quote or picture (so that one can type on),
  // which on the page is an empty line nobody wrote.
  // Squire holds every part of the text in a block: a picture's <img> (or a
  // video's link) in a <div> inside its <figure>, a dividing line in a
  // paragraph of its own.
  // Saved, each is as it was written: the <img> in the <figure>, the <hr>
  // between the paragraphs.
  function editorHtml() {
    var html = editor.getHTML();
    if (html.indexOf("<figure") >= 0 || html.indexOf("<hr") >= 0) {
      var inert = document.createElement("template");
      inert.innerHTML = html;
      inert.content.querySelectorAll("figure > div, figure > p").forEach(function (wrapper) {
        // A picture's <img>, or a video's link, alone in its wrapper.
        var only = wrapper.querySelector(":scope > img, :scope > a");
        if (only && wrapper.textContent.trim() === only.textContent.trim() &&
            wrapper.querySelectorAll(":scope > :not(br)").length === 1) wrapper.replaceWith(only);
      });
      // Parsing splits Squire's <p><hr></p> into <p></p><hr><p></p>: the
      // two empty paragraphs (Squire's own empty ones hold a <br>) go.
      inert.content.querySelectorAll("hr").forEach(function (hr) {
        [hr.previousSibling, hr.nextSibling].forEach(function (next) {
          if (next && /^(P|DIV)$/.test(next.nodeName) && !next.firstChild) next.remove();
        });
      });
      html = inert.innerHTML;
    }
    return html.replace(/(?:<(p|div)>(?:<br>)?<\/\1>\s*)+$/, "");
  }
  // A dividing line after the block the cursor is in (in place of it, when
  // it is empty), and the cursor in a new paragraph below it.
  function insertLine() {
    var after = document.createElement("p");
    after.appendChild(document.createElement("br"));
    editor.modifyBlocks(function (fragment) {
      var line = document.createElement("p");
      line.appendChild(document.createElement("hr"));
      var blocks = fragment.childNodes;
      var empty = blocks.length === 1 && !blocks[0].textContent.trim() && !blocks[0].querySelector("img, hr");
      if (empty) fragment.removeChild(blocks[0]);
      fragment.appendChild(line);
      fragment.appendChild(after);
      return fragment;
    });
    var into = document.createRange();
    into.setStart(after, 0);
    into.collapse(true);
    editor.setSelection(into);
  }
  if (window.Squire && window.DOMPurify) {
    surface.hidden = false;
    toolbar.hidden = false;
    textarea.hidden = true;
    editor = new window.Squire(surface, {
      blockTag: "P",
      sanitizeToDOMFragment: cleanHtml,
    });
    editor.setHTML(textarea.value);
    editor.addEventListener("input", function () { textarea.value = editorHtml(); });
    var source = toolbar.querySelector('[data-command="source"]');
    var blockStyle = toolbar.querySelector('[data-command="block"]');
    // The toolbar says where the cursor is: its block's style, and which of
    // bold, italic, the lists, quote and link apply there.
    // (A path is the elements from the text's top down: "BLOCKQUOTE>P>B".)
    var pressed = { bold: "(^|>)(B|STRONG)\\b", italic: "(^|>)(I|EM)\\b", ul: "(^|>)UL\\b", ol: "(^|>)OL\\b", quote: "(^|>)BLOCKQUOTE\\b", link: "(^|>)A\\b" };
    editor.addEventListener("pathChange", function () {
      var path = editor.getPath();
      Object.keys(pressed).forEach(function (command) {
        var button = toolbar.querySelector('[data-command="' + command + '"]');
        button.setAttribute("aria-pressed", String(new RegExp(pressed[command]).test(path)));
      });
      var block = (path.match(/(?:^|>)(H[2-4]|P)(?:>|$|\.|\[)/) || [])[1];
      blockStyle.value = block || "P";
    });
    function setBlock(tag) {
      editor.modifyBlocks(function (fragment) {
        // Each paragraph or heading becomes `tag`, its words and their
        // formatting kept; lists and quotes keep their shape.
        Array.prototype.slice.call(fragment.querySelectorAll("p, div, h1, h2, h3, h4, h5, h6")).forEach(function (block) {
          if (block.querySelector("p, div, h1, h2, h3, h4, h5, h6, ul, ol, blockquote, figure")) return;
          var renamed = document.createElement(tag);
          while (block.firstChild) renamed.appendChild(block.firstChild);
          block.parentNode.replaceChild(renamed, block);
        });
        return fragment;
      });
    }
    blockStyle.addEventListener("change", function () {
      if (surface.hidden) return;
      setBlock(blockStyle.value);
      textarea.value = editorHtml();
      editor.focus();
    });
    function run(command) {
      var path = editor.getPath();
      if (command === "bold") editor.hasFormat("B") ? editor.removeBold() : editor.bold();
      if (command === "italic") editor.hasFormat("I") ? editor.removeItalic() : editor.italic();
      if (command === "ul") /UL/.test(path) ? editor.removeList() : editor.makeUnorderedList();
      if (command === "ol") /OL/.test(path) ? editor.removeList() : editor.makeOrderedList();
      if (command === "quote") /BLOCKQUOTE/.test(path) ? editor.decreaseQuoteLevel() : editor.increaseQuoteLevel();
      if (command === "rule") insertLine();
      if (command === "link") return openLinkDialog();
      if (command === "picture") return Admin.pictureDialog && Admin.pictureDialog(editor);
      if (command === "embed") return openEmbedDialog();
      textarea.value = editorHtml();
      editor.focus();
    }
    toolbar.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button) return;
      var command = button.dataset.command;
      if (command === "source") {
        var showing = !textarea.hidden;
        if (showing) editor.setHTML(textarea.value); else textarea.value = editorHtml();
        textarea.hidden = showing;
        surface.hidden = !showing;
        blockStyle.disabled = !showing;
        source.setAttribute("aria-pressed", String(!showing));
        (showing ? surface : textarea).focus();
        return;
      }
      if (!surface.hidden) run(command);
    });
    editor.setKeyHandler("Ctrl-k", function (self, event) { event.preventDefault(); run("link"); });
    editor.setKeyHandler("Meta-k", function (self, event) { event.preventDefault(); run("link"); });
    // The media module's part (admin-media.js): pictures in the text.
    Admin.bodyEditor = { editor: editor, surface: surface, changed: function () { textarea.value = editorHtml(); } };
  }

  // Times: the inputs show local time; the API wants RFC 3339.
  ["publication_start", "publication_end"].forEach(function (name) {
    var input = form.elements[name];
    if (!input.dataset.utc) return;
    var t = new Date(input.dataset.utc);
    var local = new Date(t.getTime() - t.getTimezoneOffset() * 60000);
    input.value = local.toISOString().slice(0, 16);
  });
  function utc(input) {
    return input.value ? new Date(input.value).toISOString() : null;
  }

  // Nothing typed is lost. What the form holds is compared with what was last
  // saved: leaving with a difference asks first, and the difference is kept in
  // this browser's storage as it is typed, offered back when the editor opens
  // again (after a closed tab, a crash, a lost connection).
  function currentBody() {
    return editor && textarea.hidden ? editorHtml() : textarea.value;
  }
  var fieldNames = ["title", "summary", "category", "name", "slug", "published",
    "publication_start", "publication_end", "visibility"];
  // A picture's own texts (the image category): what a reader who cannot see
  // it is told, and a longer description.
  var pictureTexts = ["alt", "description"].filter(function (n) { return form.elements[n]; });
  fieldNames = fieldNames.concat(pictureTexts);
  pictureTexts.forEach(function (n) { Admin.showStored(form.elements[n]); });
  function snapshot() {
    var fields = { body: currentBody() };
    fieldNames.forEach(function (n) {
      var el = form.elements[n];
      fields[n] = el.type === "checkbox" ? el.checked : el.value;
    });
    return fields;
  }
  function fill(fields) {
    fieldNames.forEach(function (n) {
      var el = form.elements[n];
      if (!(n in fields)) return;
      if (el.type === "checkbox") el.checked = fields[n]; else el.value = fields[n];
    });
    textarea.value = fields.body || "";
    if (editor) editor.setHTML(textarea.value);
  }
  var savedState = JSON.stringify(snapshot());
  function dirty() { return JSON.stringify(snapshot()) !== savedState; }
  var draftKey = "bulwark.draft." + location.host + "." + id;
  var draftUrl = "/api/rsc/" + id + "/draft";
  function keepDraft() {
    try {
      if (dirty()) {
        localStorage.setItem(draftKey, JSON.stringify({ version: Number(form.dataset.version), at: Date.now(), fields: snapshot() }));
      } else {
        localStorage.removeItem(draftKey);
      }
    } catch (e) { /* storage full or refused: the server's copy and the leave warning still guard */ }
  }
  // The server's working copy (drafts.rs): what another browser or device
  // of the same editor offers back too.
  var keptOnServer = false;
  function draftRequest(method, body, leaving) {
    return fetch(draftUrl, {
      method: method,
      credentials: "same-origin",
      keepalive: !!leaving,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": form.dataset.csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }
  function keepOnServer(leaving) {
    if (dirty()) {
      return draftRequest("PUT", { version: Number(form.dataset.version), fields: snapshot() }, leaving)
        .then(function (res) { if (res.ok) keptOnServer = true; })
        .catch(function () { /* kept in this browser meanwhile; the next change tries again */ });
    }
    return dropOnServer(leaving);
  }
  function dropOnServer(leaving) {
    if (!keptOnServer) return Promise.resolve();
    keptOnServer = false;
    return draftRequest("DELETE", undefined, leaving).catch(function () {});
  }
  var draftTimer = null;
  var serverTimer = null;
  function changed() {
    clearTimeout(draftTimer);
    draftTimer = setTimeout(keepDraft, 500);
    clearTimeout(serverTimer);
    serverTimer = setTimeout(keepOnServer, 2000);
  }
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  if (editor) editor.addEventListener("input", changed);
  window.addEventListener("beforeunload", function (event) {
    if (!dirty()) return;
    keepDraft();
    keepOnServer(true);
    event.preventDefault();
    event.returnValue = "";
  });
  function markSaved() {
    savedState = JSON.stringify(snapshot());
    clearTimeout(serverTimer);
    try { localStorage.removeItem(draftKey); } catch (e) { /* nothing kept */ }
    // Dropped even when this page kept none: a PUT may still be on its way,
    // or the copy came from another tab or device.
    keptOnServer = false;
    draftRequest("DELETE").catch(function () {});
  }

  // On opening: the newer of this browser's copy and the server's, if it
  // differs from what is saved, is offered (never put in unasked).
  var draftBox = document.getElementById("draft");
  (function offerDraft() {
    var local = null;
    try { local = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (e) { local = null; }
    draftRequest("GET").then(function (res) {
      return res.ok ? res.json() : null;
    }, function () { return null; }).then(function (server) {
      if (server) {
        keptOnServer = true;
        server = { version: server.version, at: Date.parse(server.saved) || 0, fields: server.fields };
      }
      var kept = [local, server].filter(function (k) {
        return k && k.fields && JSON.stringify(k.fields) !== savedState;
      }).sort(function (a, b) { return b.at - a.at; })[0];
      if (!kept) return;
      var from = { time: new Date(kept.at).toLocaleString() };
      document.getElementById("draft-title").textContent = kept.version < Number(form.dataset.version)
        ? _("You have changes here that were not saved, from {time} (this page has been saved by someone since: you will see both before yours replaces theirs).", from)
        : _("You have changes here that were not saved, from {time}.", from);
      draftBox.hidden = false;
      document.getElementById("draft-restore").addEventListener("click", function () {
        fill(kept.fields);
        // Saved against the version it was written on: if that is not the
        // latest any more, the save shows both versions first.
        if (kept.version < Number(form.dataset.version)) form.dataset.version = kept.version;
        draftBox.hidden = true;
        say(_("Your unsaved changes are back in the form. Save to keep them."), "");
        form.elements.title.focus();
      });
      document.getElementById("draft-discard").addEventListener("click", function () {
        try { localStorage.removeItem(draftKey); } catch (e) { /* nothing kept */ }
        dropOnServer();
        draftBox.hidden = true;
        form.elements.title.focus();
      });
    });
  })();

  // A save refused because someone else saved first: both versions shown,
  // and the editor chooses.
  var conflictBox = document.getElementById("conflict");
  var theirs = null;
  function showConflict() {
    return Admin.api("GET", "/api/rsc/" + id).then(function (current) {
      theirs = current;
      var diff = document.getElementById("conflict-diff");
      diff.innerHTML = "";
      diff.appendChild(diffOf(describe(current.props || {}), describe(snapshot())));
      conflictBox.hidden = false;
      say(_("Not saved yet: someone else saved this page meanwhile. Choose below."), "conflict");
      document.getElementById("conflict-title").tabIndex = -1;
      document.getElementById("conflict-title").focus();
    });
  }
  var sendEverything = false;
  document.getElementById("conflict-mine").addEventListener("click", function () {
    if (!theirs) return;
    form.dataset.version = theirs.version;
    conflictBox.hidden = true;
    // Mine replaces theirs whole, not only what I changed.
    sendEverything = true;
    form.requestSubmit();
  });
  document.getElementById("conflict-theirs").addEventListener("click", function () {
    if (!theirs) return;
    var p = theirs.props || {};
    fill({ body: p.body || "" });
    // Theirs is stored source: shown as text where it is text.
    form.elements.title.value = p.title || "";
    form.elements.summary.value = p.summary || "";
    Admin.showStored(form.elements.title);
    Admin.showStored(form.elements.summary);
    form.dataset.version = theirs.version;
    conflictBox.hidden = true;
    say(_("Their version is in the form; yours is dropped."), "");
  });

  // Where the page stands, said at the top and kept true after every save:
  // a draft, scheduled (with when it goes live), published, or ended.
  var stateBadge = document.getElementById("state");
  function showState(r) {
    var now = Date.now();
    var start = r.publication_start ? Date.parse(r.publication_start) : null;
    var end = r.publication_end ? Date.parse(r.publication_end) : null;
    var state = !r.published ? "draft"
      : start !== null && start > now ? "scheduled"
      : end !== null && end <= now ? "ended"
      : "published";
    stateBadge.className = "badge " + state;
    stateBadge.textContent = { draft: _("draft"), scheduled: _("scheduled"), published: _("published"), ended: _("ended") }[state];
    var moment = state === "scheduled" ? r.publication_start : state === "ended" ? r.publication_end : null;
    if (moment) {
      stateBadge.appendChild(document.createTextNode(" "));
      stateBadge.appendChild(Admin.when(moment));
    }
  }
  // The moment the server wrote (in UTC), as showState writes it.
  var written = stateBadge.querySelector("time");
  if (written) stateBadge.replaceChild(Admin.when(written.getAttribute("datetime")), written);

  // The save bar: "Save and publish" while the resource is a draft, and
  // Ctrl+S (Cmd+S) saves from anywhere on the page.
  var publishNow = document.getElementById("publish-now");
  function showPublishNow() { publishNow.hidden = form.published.checked; }
  form.published.addEventListener("change", showPublishNow);
  publishNow.addEventListener("click", function () {
    form.published.checked = true;
    showPublishNow();
    form.requestSubmit();
  });
  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  var original = { name: form.elements.name.value, slug: form.elements.slug.value };
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (editor && textarea.hidden) textarea.value = editorHtml();
    // Only what changed since the last save is sent: a field the editor did
    // not touch keeps its stored bytes, whatever the rich-text editor or a
    // browser would make of them. (Nothing changed: the server writes nothing.)
    var now = snapshot();
    var before = JSON.parse(savedState);
    var all = sendEverything;
    sendEverything = false;
    var props = {};
    if (all || now.title !== before.title) props.title = Admin.storedValue(form.elements.title);
    if (all || now.summary !== before.summary) props.summary = Admin.storedValue(form.elements.summary);
    if (all || now.body !== before.body) props.body = textarea.value;
    pictureTexts.forEach(function (n) {
      if (all || now[n] !== before[n]) props[n] = Admin.storedValue(form.elements[n]);
    });
    var slug = form.elements.slug.value.trim();
    if (slug !== original.slug) props.slug = slug ? Admin.storedValue(form.elements.slug).trim() : null;
    // A translated text changes in the admin's language only; the store
    // merges it with the other languages.
    (form.dataset.translated || "").split(" ").forEach(function (field) {
      if (!field || !(field in props)) return;
      var text = {};
      text[form.dataset.language] = props[field] === null ? "" : props[field];
      props[field] = { trans: text };
    });
    var visibility = form.elements.visibility.value;
    var body = {
      category: form.elements.category.value,
      published: form.published.checked,
      publication_start: utc(form.elements.publication_start),
      publication_end: utc(form.elements.publication_end),
      visibility: visibility.indexOf("group:") === 0 ? "group" : visibility,
      props: props,
    };
    if (visibility.indexOf("group:") === 0) body.content_group = Number(visibility.slice(6));
    var name = form.elements.name.value.trim();
    if (name !== original.name) body.name = name || null;
    say(_("Saving…"));
    fetch("/api/rsc/" + id, {
      method: "PATCH",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "If-Match": '"' + form.dataset.version + '"',
        "X-CSRF-Token": form.dataset.csrf,
      },
      body: JSON.stringify(body),
    })
      .then(function (res) {
        return res.json().then(function (answer) { return { res: res, answer: answer }; });
      })
      .then(function (r) {
        if (r.res.ok) {
          form.dataset.version = r.answer.version;
          original = { name: name, slug: slug };
          var title = r.answer.props.title;
          if (title && title.trans) title = title.trans[form.dataset.language];
          document.getElementById("heading").textContent = Admin.storedText(title) || _("(untitled)");
          showState(r.answer);
          say(_("Saved."), "ok");
          Admin.toast(body.published ? _("Saved and published.") : _("Saved as a draft."));
          markSaved();
          tellOthers("saved", r.answer.version);
          conflictBox.hidden = true;
          refreshPreview();
          loadRevisions();
        } else if (r.res.status === 409) {
          return showConflict();
        } else {
          say(_("Not saved: {reason}", { reason: r.answer.detail || r.res.status }), "error");
        }
      })
      .catch(function () { say(_("Not saved: the server could not be reached. Try again."), "error"); });
  });

  // Who else has this resource open: each editor's page says so to the
  // server (POST .../editing), which tells the others over push (the topic
  // admin/editing/{id}, for editors only). A page not heard from for a
  // minute has gone.
  var others = document.getElementById("others");
  var tellOthers = function () {};
  if (window.Bulwark && window.Bulwark.push) {
    var tab = Math.random().toString(36).slice(2) + Date.now().toString(36);
    var topic = "admin/editing/" + id;
    var seen = {};
    var news = "";
    tellOthers = function (state, version) {
      var said = { tab: tab, state: state };
      if (version !== undefined) said.version = Number(version);
      return fetch("/api/rsc/" + id + "/editing", {
        method: "POST",
        credentials: "same-origin",
        keepalive: state === "left",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": form.dataset.csrf },
        body: JSON.stringify(said),
      }).catch(function () { /* the next one will do */ });
    };
    var showOthers = function () {
      var now = Date.now();
      var names = [];
      Object.keys(seen).forEach(function (t) {
        if (now - seen[t].at > 60000) delete seen[t];
        else if (names.indexOf(seen[t].name) < 0) names.push(seen[t].name);
      });
      others.hidden = !names.length && !news;
      var present = { names: names.join(", ") };
      others.textContent = (names.length
        ? (names.length === 1 ? _("{names} has this open in the editor too.", present) : _("{names} have this open in the editor too.", present)) + " "
        : "") + news;
    };
    var push = window.Bulwark.push();
    push.on("reset", function () {});
    // Once listening (again, after a reconnect), this page says it is here.
    push.on("subscribed", function (e) { if (e.filter === topic) tellOthers("here"); });
    push.subscribe(topic, function (m) {
      if (m.tab === tab) return;
      if (m.state === "left") {
        delete seen[m.tab];
      } else {
        // A newcomer hears of this page at once, not at its next beat.
        if (!seen[m.tab] && m.state === "here") tellOthers("here");
        seen[m.tab] = { name: m.name, at: Date.now() };
        if (m.state === "saved") {
          news = _("{name} saved version {version} at {time}. If you save, you will see their version and yours first.",
            { name: m.name, version: m.version, time: new Date().toLocaleTimeString() });
        }
      }
      showOthers();
    });
    setInterval(function () { tellOthers("here"); showOthers(); }, 20000);
    window.addEventListener("pagehide", function () { tellOthers("left"); });
  }

  // Preview: the public page as it renders now, drafts included for those
  // who may see them.
  var preview = document.getElementById("preview");
  var frame = document.getElementById("preview-frame");
  var toggle = document.getElementById("preview-toggle");
  function refreshPreview() {
    if (!preview.hidden) frame.src = form.dataset.page + (form.dataset.page.indexOf("?") < 0 ? "?" : "&") + "preview=" + Date.now();
  }
  toggle.addEventListener("click", function () {
    preview.hidden = !preview.hidden;
    toggle.setAttribute("aria-expanded", String(!preview.hidden));
    refreshPreview();
  });

  // Tags: keywords connected by `subject`. Suggestions as one types; Enter
  // uses the keyword of that title (any case) or makes it, then connects it.
  var tagInput = document.getElementById("tag-input");
  var tagList = document.getElementById("tag-list");
  var tagStatus = document.getElementById("tags-status");
  var suggestions = document.getElementById("tag-suggestions");
  function keywordsLike(text) {
    return Admin.api("GET", "/api/search?cat=keyword&pagelen=8&text=" + encodeURIComponent(text))
      .then(function (answer) { return answer.items || []; });
  }
  function tagItem(keyword, title) {
    var li = document.createElement("li");
    li.dataset.id = keyword;
    var name = document.createElement("span");
    name.className = "tag";
    name.textContent = title;
    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove-tag";
    remove.setAttribute("aria-label", _("Remove the tag {tag}", { tag: title }));
    remove.textContent = "×";
    li.appendChild(name);
    li.appendChild(document.createTextNode(" "));
    li.appendChild(remove);
    return li;
  }
  var suggestTimer = null;
  tagInput.addEventListener("input", function () {
    clearTimeout(suggestTimer);
    var text = tagInput.value.trim();
    if (text.length < 2) return;
    suggestTimer = setTimeout(function () {
      keywordsLike(text).then(function (found) {
        suggestions.replaceChildren();
        found.forEach(function (k) {
          var option = document.createElement("option");
          option.value = Admin.storedText(k.props && k.props.title);
          suggestions.appendChild(option);
        });
      }).catch(function () { /* no suggestions; Enter still works */ });
    }, 200);
  });
  tagInput.addEventListener("keydown", function (event) {
    if (event.key !== "Enter") return;
    event.preventDefault();
    var title = tagInput.value.trim();
    if (!title) return;
    var same = function (k) { return Admin.storedText(k.props && k.props.title).toLowerCase() === title.toLowerCase(); };
    keywordsLike(title).then(function (found) {
      var existing = found.filter(same)[0];
      if (existing) return { id: existing.id, title: Admin.storedText(existing.props.title) };
      return Admin.api("POST", "/api/rsc", { category: "keyword", published: true, props: { title: Admin.escapeText(title) } })
        .then(function (made) { return { id: made.id, title: title }; });
    }).then(function (keyword) {
      if (tagList.querySelector('li[data-id="' + keyword.id + '"]')) {
        Admin.say(tagStatus, _("Already tagged {tag}.", { tag: keyword.title }), "");
        tagInput.value = "";
        return;
      }
      return Admin.api("POST", "/api/rsc/" + id + "/edges", { predicate: "subject", object: keyword.id }).then(function () {
        tagList.appendChild(tagItem(keyword.id, keyword.title));
        tagInput.value = "";
        suggestions.replaceChildren();
        Admin.say(tagStatus, _("Tagged {tag}.", { tag: keyword.title }), "ok");
        loadEdges();
      });
    }).catch(function (e) { Admin.say(tagStatus, _("Not tagged: {reason}", { reason: e.message }), "error"); });
  });
  tagList.addEventListener("click", function (event) {
    var button = event.target.closest(".remove-tag");
    if (!button) return;
    var li = button.closest("li");
    var title = li.querySelector(".tag").textContent;
    Admin.api("DELETE", "/api/rsc/" + id + "/edges/subject/" + li.dataset.id).then(function () {
      li.remove();
      Admin.say(tagStatus, _("Removed the tag {tag}.", { tag: title }), "ok");
      tagInput.focus();
      loadEdges();
    }).catch(function (e) { Admin.say(tagStatus, _("Not removed: {reason}", { reason: e.message }), "error"); });
  });

  // Edges: by predicate, in order; add, remove, move (drag or buttons).
  var edgeStatus = document.getElementById("edges-status");
  var lists = document.getElementById("edge-lists");
  var titles = {};
  function titleOf(object) {
    if (titles[object]) return Promise.resolve(titles[object]);
    return Admin.api("GET", "/api/rsc/" + object).then(function (r) {
      titles[object] = Admin.storedText(r.props && r.props.title) || "#" + object;
      return titles[object];
    }, function () { return "#" + object; });
  }
  function move(predicate, object, position) {
    return Admin.api("PATCH", "/api/rsc/" + id + "/edges/" + encodeURIComponent(predicate) + "/" + object, { position: position })
      .then(function () { Admin.say(edgeStatus, _("Moved."), "ok"); return loadEdges(); })
      .catch(function (e) { Admin.say(edgeStatus, _("Not moved: {reason}", { reason: e.message }), "error"); return loadEdges(); });
  }
  function edgeItem(edge, index, count) {
    var li = document.createElement("li");
    li.dataset.object = edge.object;
    var handle = document.createElement("span");
    handle.className = "drag";
    handle.setAttribute("aria-hidden", "true");
    handle.textContent = "⠿";
    li.appendChild(handle);
    var link = document.createElement("a");
    link.href = "/admin/edit/" + edge.object;
    link.textContent = "#" + edge.object;
    titleOf(edge.object).then(function (t) { link.textContent = t; });
    li.appendChild(link);
    var actions = document.createElement("span");
    actions.className = "row-actions";
    var which = { predicate: edge.predicate, object: edge.object };
    [["↑", _("Move up: {predicate} {object}", which), index - 1, index > 0], ["↓", _("Move down: {predicate} {object}", which), index + 1, index < count - 1]].forEach(function (b) {
      if (!b[3]) return;
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = b[0];
      button.setAttribute("aria-label", b[1]);
      button.addEventListener("click", function () { move(edge.predicate, edge.object, b[2]); });
      actions.appendChild(button);
    });
    var remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = _("Remove");
    remove.setAttribute("aria-label", _("Remove {predicate} {object}", which));
    remove.addEventListener("click", function () {
      Admin.api("DELETE", "/api/rsc/" + id + "/edges/" + encodeURIComponent(edge.predicate) + "/" + edge.object)
        .then(function () { Admin.say(edgeStatus, _("Removed."), "ok"); loadEdges(); })
        .catch(function (e) { Admin.say(edgeStatus, _("Not removed: {reason}", { reason: e.message }), "error"); });
    });
    actions.appendChild(remove);
    li.appendChild(actions);
    return li;
  }
  function loadEdges() {
    return Admin.api("GET", "/api/rsc/" + id + "/edges").then(function (answer) {
      lists.innerHTML = "";
      var by = {};
      answer.edges.forEach(function (e) { (by[e.predicate] = by[e.predicate] || []).push(e); });
      var predicates = Object.keys(by).sort();
      if (!predicates.length) {
        var none = document.createElement("p");
        none.textContent = _("None yet.");
        lists.appendChild(none);
      }
      predicates.forEach(function (predicate) {
        var h = document.createElement("h3");
        h.textContent = predicate;
        lists.appendChild(h);
        var ul = document.createElement("ul");
        ul.className = "edges plain";
        ul.dataset.predicate = predicate;
        by[predicate].forEach(function (e, i) { ul.appendChild(edgeItem(e, i, by[predicate].length)); });
        lists.appendChild(ul);
        if (window.Sortable) {
          window.Sortable.create(ul, {
            handle: ".drag",
            forceFallback: true,
            onEnd: function (event) {
              if (event.oldIndex !== event.newIndex) move(predicate, event.item.dataset.object, event.newIndex);
            },
          });
        }
      });
    }).catch(function (e) { Admin.say(edgeStatus, _("Could not load the connections: {reason}", { reason: e.message }), "error"); });
  }
  var adder = document.getElementById("new-edge");
  var candidates = document.getElementById("edge-candidates");
  Admin.api("GET", "/api/predicates").then(function (answer) {
    answer.predicates.forEach(function (p) {
      if (p.name === "hasusergroup" || p.name === "hasparentgroup") return;
      var option = document.createElement("option");
      option.value = p.name;
      option.textContent = p.title || p.name;
      adder.elements.predicate.appendChild(option);
    });
  }).catch(function () {});
  adder.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = adder.elements.text.value.trim();
    Admin.api("GET", "/api/search?pagelen=10&text=" + encodeURIComponent(text)).then(function (found) {
      candidates.innerHTML = "";
      if (!found.items.length) Admin.say(edgeStatus, _("Nothing found for {text}.", { text: text }), "");
      found.items.forEach(function (r) {
        if (String(r.id) === id) return;
        var li = document.createElement("li");
        var add = document.createElement("button");
        add.type = "button";
        add.textContent = _("Add {title}", { title: Admin.storedText(r.props && r.props.title) || "#" + r.id });
        add.addEventListener("click", function () {
          var predicate = adder.elements.predicate.value;
          Admin.api("POST", "/api/rsc/" + id + "/edges", { predicate: predicate, object: r.id })
            .then(function () { Admin.say(edgeStatus, _("Added."), "ok"); candidates.innerHTML = ""; loadEdges(); })
            .catch(function (e) { Admin.say(edgeStatus, _("Not added: {reason}", { reason: e.message }), "error"); });
        });
        li.appendChild(add);
        li.appendChild(document.createTextNode(" " + r.category));
        candidates.appendChild(li);
      });
    }).catch(function (e) { Admin.say(edgeStatus, _("Search failed: {reason}", { reason: e.message }), "error"); });
  });
  loadEdges();

  // Two texts word by word: what only the first has struck through, what
  // only the second has underlined.
  function diffOf(before, after) {
    var parts = window.Diff ? window.Diff.diffWords(before, after) : [{ removed: true, value: before }, { added: true, value: after }];
    var pre = document.createElement("pre");
    parts.forEach(function (part) {
      var el = document.createElement(part.added ? "ins" : part.removed ? "del" : "span");
      el.textContent = part.value;
      pre.appendChild(el);
    });
    return pre;
  }

  // Revisions: what each earlier version said, compared with now, and put back.
  var revStatus = document.getElementById("revisions-status");
  var revList = document.getElementById("revision-list");
  var revEmpty = document.getElementById("revisions-empty");
  var diffBox = document.getElementById("revision-diff");
  function text(html) {
    var div = document.createElement("div");
    div.innerHTML = window.DOMPurify ? window.DOMPurify.sanitize(html || "") : "";
    return div.textContent;
  }
  function describe(props) {
    return _("Title: {title}", { title: text(props.title) }) + "\n\n" + _("Summary: {summary}", { summary: text(props.summary) }) + "\n\n" + text(props.body);
  }
  function showDiff(old) {
    var now = { title: form.title.value, summary: form.summary.value, body: textarea.value };
    diffBox.innerHTML = "";
    var pre = diffOf(describe(old), describe(now));
    var caption = document.createElement("p");
    caption.textContent = _("From that version (struck through) to what the form holds now (underlined):");
    diffBox.appendChild(caption);
    diffBox.appendChild(pre);
    diffBox.hidden = false;
  }
  function loadRevisions() {
    return Admin.api("GET", "/api/rsc/" + id + "/revisions").then(function (answer) {
      revList.innerHTML = "";
      revEmpty.hidden = answer.revisions.length > 0;
      answer.revisions.slice(0, 20).forEach(function (rev) {
        var li = document.createElement("li");
        // Who wrote that version, and when (its own modification time).
        var written = (rev.resource && rev.resource.modified) || rev.created;
        li.appendChild(document.createTextNode(_("Version {version}, saved", { version: rev.version }) + " "));
        if (rev.modifier) {
          var who = document.createElement("a");
          who.href = "/admin/edit/" + rev.modifier;
          who.textContent = "#" + rev.modifier;
          titleOf(rev.modifier).then(function (t) { who.textContent = t; });
          li.appendChild(document.createTextNode(_("by") + " "));
          li.appendChild(who);
          li.appendChild(document.createTextNode(" "));
        }
        li.appendChild(Admin.when(written));
        li.appendChild(document.createTextNode(" "));
        var compare = document.createElement("button");
        compare.type = "button";
        compare.textContent = _("Compare");
        compare.setAttribute("aria-label", _("Compare version {version} with now", { version: rev.version }));
        compare.addEventListener("click", function () { showDiff(rev.resource.props || {}); });
        var restore = document.createElement("button");
        restore.type = "button";
        restore.textContent = _("Restore");
        restore.setAttribute("aria-label", _("Restore version {version}", { version: rev.version }));
        restore.addEventListener("click", function () {
          // The content comes back; publication stays as it is (the API's
          // default): a page that is live now stays live.
          if (!window.confirm(_("Put the content of version {version} back (title, summary, body, category)? It is saved as a new version, so this can be undone the same way. Whether and when the page is published stays as it is now.", { version: rev.version }))) return;
          fetch("/api/rsc/" + id + "/revisions/" + rev.id + "/restore", {
            method: "POST",
            credentials: "same-origin",
            headers: { "If-Match": '"' + form.dataset.version + '"', "X-CSRF-Token": form.dataset.csrf },
          }).then(function (res) {
            if (res.ok) { window.location.reload(); return; }
            return res.json().then(function (answer) {
              Admin.say(revStatus, res.status === 409
                ? _("Someone else changed this page meanwhile: reload it, then restore again.")
                : _("Not restored: {reason}", { reason: answer.detail || res.status }), "error");
            });
          }).catch(function () { Admin.say(revStatus, _("Not restored: the server could not be reached."), "error"); });
        });
        li.appendChild(compare);
        li.appendChild(document.createTextNode(" "));
        li.appendChild(restore);
        revList.appendChild(li);
      });
    }).catch(function (e) { Admin.say(revStatus, _("Could not load the versions: {reason}", { reason: e.message }), "error"); });
  }
  loadRevisions();
})();

// "Edit this page" on a public page, for editors. The page is the same for
// everyone (so it stays one cached page); this script adds the link when the
// browser holds the hint cookie logon sets for editors (bulwark_editor=1) and
// the page names its resource (<body data-resource="ID">). Whether the person
// may edit it is decided by the admin when the link is followed.
// Its one text is translated when the page gives scripts their texts (core's
// js/texts.js before this file); else it is shown as written.
(function () {
  const _ = window._ || ((t, v = {}) => t.replace(/\{(\w+)\}/g, (m, k) => (k in v ? String(v[k]) : m)));
  var id = document.body.getAttribute("data-resource");
  if (!id || !/(^|;\s*)bulwark_editor=1(;|$)/.test(document.cookie)) return;
  var link = document.createElement("a");
  link.href = "/admin/edit/" + encodeURIComponent(id);
  link.className = "edit-link";
  link.textContent = _("Edit this page");
  document.body.appendChild(link);
})();

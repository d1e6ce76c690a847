/* Live elements: `<div id="x" data-live="rsc/42">` is re-fetched and replaced
 * whenever its topic publishes (resources publish on rsc/{id} when they change).
 * Needs bulwark.js first: {{ lib("js/bulwark.js", "js/bulwark-live.js") }}. */
(function () {
  "use strict";
  var elements = document.querySelectorAll("[data-live]");
  if (!elements.length) return;
  var push = Bulwark.push();
  var pending = null;
  function refresh() {
    // Several changes in a burst cost one fetch.
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      fetch(location.href, {cache: "no-store", credentials: "same-origin"})
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          document.querySelectorAll("[data-live]").forEach(function (el) {
            var fresh = el.id && doc.getElementById(el.id);
            if (fresh && fresh.innerHTML !== el.innerHTML) {
              el.innerHTML = fresh.innerHTML;
              el.dispatchEvent(new CustomEvent("bulwark:updated", {bubbles: true}));
            }
          });
        });
    }, 30);
  }
  var topics = {};
  elements.forEach(function (el) { topics[el.dataset.live] = true; });
  Object.keys(topics).forEach(function (topic) { push.subscribe(topic, refresh); });
})();

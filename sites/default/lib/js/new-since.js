// "New since your last visit", as seed 002 does it: the page is one cached
// page for everyone, with each item's date in it (<time datetime>); this
// script keeps the time of the visitor's last visit in the browser and marks
// what is newer. A visit is a browser session (sessionStorage): the items new
// since the visit before stay marked on every page of this one.
(function () {
  "use strict";
  var LAST = "bulwark_last_seen";
  var SINCE = "bulwark_new_since";
  var since;
  try {
    since = sessionStorage.getItem(SINCE);
    if (since === null) {
      since = localStorage.getItem(LAST) || "";
      sessionStorage.setItem(SINCE, since);
    }
    localStorage.setItem(LAST, new Date().toISOString());
  } catch (e) {
    return; // Storage refused (private mode, blocked): nothing to compare with.
  }
  if (!since) return; // A first visit: everything is new, nothing is marked.
  var then = Date.parse(since);
  document.querySelectorAll(".card time[datetime]").forEach(function (time) {
    if (!(Date.parse(time.dateTime) > then)) return;
    var card = time.closest(".card");
    card.classList.add("is-new");
    var mark = document.createElement("span");
    mark.className = "new-mark";
    mark.textContent = "New";
    time.parentNode.insertBefore(mark, time);
    time.parentNode.insertBefore(document.createTextNode(" "), time);
  });
})();

// On a phone the navigation folds behind its Menu button (without this
// script it stays open, one link under the other).
(function () {
  var toggle = document.querySelector(".nav-toggle");
  var nav = document.getElementById("site-nav");
  if (!toggle || !nav) return;
  document.documentElement.classList.add("js");
  toggle.hidden = false;
  toggle.addEventListener("click", function () {
    var open = nav.classList.toggle("open");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
})();

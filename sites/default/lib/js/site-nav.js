// On a phone the navigation is folded behind its Menu toggle from the first
// paint (site.css; without this script the toggle is a link to it, which
// opens it). Here the toggle becomes a button that opens and closes it.
(function () {
  var toggle = document.querySelector(".nav-toggle");
  var nav = document.getElementById("site-nav");
  if (!toggle || !nav) return;
  document.documentElement.classList.add("js");
  toggle.setAttribute("role", "button");
  function flip(event) {
    event.preventDefault();
    var open = nav.classList.toggle("open");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  toggle.addEventListener("click", flip);
  toggle.addEventListener("keydown", function (event) {
    if (event.key === " ") flip(event);
  });
})();

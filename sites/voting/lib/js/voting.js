/* The projects page: the theme filter fetches the list for one theme (Ajax)
 * and keeps the voter's picks across filters; at most three may be picked,
 * and the form sends them all, also those the current filter hides. */
(function () {
  "use strict";
  var PICKS = 3;
  var form = document.getElementById("pick");
  var list = document.getElementById("list");
  var counter = document.getElementById("picked");
  var picked = [];

  function sync() {
    var boxes = list.querySelectorAll("input[name=p]");
    for (var i = 0; i < boxes.length; i++) {
      boxes[i].checked = picked.indexOf(boxes[i].value) >= 0;
      boxes[i].disabled = !boxes[i].checked && picked.length >= PICKS;
    }
    counter.textContent = picked.length + " " + counter.dataset.label;
  }

  list.addEventListener("change", function (e) {
    var box = e.target;
    if (box.name !== "p") return;
    var at = picked.indexOf(box.value);
    if (box.checked && at < 0 && picked.length < PICKS) picked.push(box.value);
    if (!box.checked && at >= 0) picked.splice(at, 1);
    sync();
  });

  document.querySelector(".filter").addEventListener("click", function (e) {
    var link = e.target.closest("a[data-theme]");
    if (!link) return;
    e.preventDefault();
    var theme = link.dataset.theme;
    fetch("/projects/list" + (theme ? "?theme=" + encodeURIComponent(theme) : ""))
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        list.innerHTML = html;
        var links = document.querySelectorAll(".filter a");
        for (var i = 0; i < links.length; i++) links[i].classList.toggle("current", links[i] === link);
        sync();
      })
      .catch(function () { location.href = link.href; });
  });

  form.addEventListener("submit", function () {
    var boxes = list.querySelectorAll("input[name=p]");
    for (var i = 0; i < boxes.length; i++) boxes[i].disabled = true;
    picked.forEach(function (id) {
      var hidden = document.createElement("input");
      hidden.type = "hidden";
      hidden.name = "p";
      hidden.value = id;
      form.appendChild(hidden);
    });
  });
  sync();
})();

/* The totals page: every vote, on whichever node it was cast, arrives over
 * push as its three projects; a reset (this node's push history does not
 * reach back) reloads the page, which counts from the database. */
(function () {
  "use strict";
  var table = document.getElementById("totals");
  var votes = document.getElementById("votes");
  var state = document.getElementById("push-state");
  var push = Bulwark.push();
  push.on("state", function (s) { state.textContent = s.state; state.dataset.state = s.state; });
  push.on("reset", function () { location.reload(); });
  push.subscribe(table.dataset.topic, function (vote) {
    votes.textContent = String(Number(votes.textContent) + 1);
    (vote.projects || []).forEach(function (id) {
      var row = table.querySelector('tr[data-project="' + Number(id) + '"]');
      if (!row) return;
      var n = row.querySelector(".n");
      n.textContent = String(Number(n.textContent) + 1);
      var above = row.previousElementSibling;
      while (above && Number(above.querySelector(".n").textContent) < Number(n.textContent)) {
        table.tBodies[0].insertBefore(row, above);
        above = row.previousElementSibling;
      }
    });
  });
})();

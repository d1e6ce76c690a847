/* The live board: posts travel over push to every open page. `?transport=sse` or
 * `?transport=poll` forces a transport (the tests use that). */
(function () {
  "use strict";
  var forced = new URLSearchParams(location.search).get("transport");
  var push = Bulwark.push(forced ? {transports: [forced]} : undefined);
  var state = document.getElementById("push-state");
  var board = document.getElementById("board");
  var form = document.getElementById("post");
  push.on("state", function (s) {
    state.textContent = s.state + (s.transport ? " (" + s.transport + ")" : "");
    state.dataset.state = s.state;
  });
  push.subscribe("site/board", function (msg) {
    var li = document.createElement("li");
    li.textContent = msg.text;
    board.insertBefore(li, board.firstChild);
  }, {snapshot: true});
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = form.elements.text.value.trim();
    if (text) push.publish("site/board", {text: text});
    form.elements.text.value = "";
  });
})();

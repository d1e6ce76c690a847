// The admin's editor: saves through the JSON API with If-Match (the version
// the page was opened at) and the session's CSRF token. A change someone else
// saved meanwhile comes back as 409 and is shown, never overwritten.
(function () {
  var form = document.getElementById("editor");
  if (!form) return;
  var status = document.getElementById("status");
  function say(text, kind) {
    status.textContent = text;
    status.className = kind || "";
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = {
      published: form.published.checked,
      props: { title: form.title.value, summary: form.summary.value, body: form.body.value },
    };
    say("Saving…");
    fetch("/api/rsc/" + form.dataset.id, {
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
          document.getElementById("heading").textContent = r.answer.props.title || "(untitled)";
          say("Saved.", "ok");
        } else if (r.res.status === 409) {
          say("Someone else changed this page since you opened it. Your change was not saved: " +
            "reload the page to see their version, then make your change again.", "conflict");
        } else {
          say("Not saved: " + (r.answer.error || r.res.status), "error");
        }
      })
      .catch(function () { say("Not saved: the server could not be reached. Try again.", "error"); });
  });
})();

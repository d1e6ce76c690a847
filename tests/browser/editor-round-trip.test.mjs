// What an editor opens comes back byte for byte: a body with escaped markup,
// an image whose alt text has spaces (stored as `alt=The&#32;fish...`), a
// title with `&` and `<`, a summary of text. Opening the editor and saving
// without a change writes nothing (no new version, no revision); changing the
// title leaves the body's stored bytes alone; the translations screen is the
// same for texts in two languages. (Before the `source` filter the browser decoded the stored body inside
// its <textarea>: `&lt;b&gt;` became bold and the alt text became "The".)
import { test } from "node:test";
import assert from "node:assert/strict";
import { callApi, eventually, logOn, said, serverAndBrowser, starterWithToken } from "./helpers.mjs";

const TOKEN = "browser-test-token";
const PASSWORD = "browser-test-admin-password";

const env = serverAndBrowser({ prepare: starterWithToken(TOKEN), env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function api(method, path, body) {
  return callApi(env.server, TOKEN, method, path, body);
}

async function someArticleId() {
  const home = await (await fetch(env.server.url + "/")).text();
  return home.match(/href="(?:\/[a-z]{2})?\/page\/(\d+)/)[1];
}

const BODY =
  `<p>Write &lt;b&gt;word&lt;/b&gt; for bold. Tom &amp; Jerry, "quoted", it's a&nbsp;b.</p>\n` +
  `<p><img src="/lib/images/fish.jpg" alt="The fish market" width="400" height="300"></p>`;

async function stored(id) {
  const r = await api("GET", `/api/rsc/${id}`);
  const revisions = (await api("GET", `/api/rsc/${id}/revisions`)).revisions.length;
  return { version: r.version, props: r.props, revisions };
}

async function saveAndWait(page) {
  await page.click('#editor button[type="submit"]');
  await said(page, "#status", /^Saved\.$/);
}

test("the editor shows stored text as it is and a save without a change writes nothing", async () => {
  const id = await someArticleId();
  await api("PATCH", `/api/rsc/${id}`, {
    props: { title: "Tom & Jerry <3 &lt;b&gt;", summary: "Fish & chips, 'fresh'", body: BODY },
  });
  const before = await stored(id);
  // The stored forms this test is about.
  assert.match(before.props.body, /&lt;b&gt;word&lt;\/b&gt;/);
  assert.match(before.props.body, /alt=The&#32;fish&#32;market/);

  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  await page.locator("#body-editor").waitFor({ state: "visible" });
  // The escaped markup is text, not bold; the alt text is whole.
  const seen = await page.evaluate(() => ({
    bold: document.querySelectorAll("#body-editor b, #body-editor strong").length,
    text: document.querySelector("#body-editor").textContent,
    alt: document.querySelector("#body-editor img").getAttribute("alt"),
    title: document.getElementById("title").value,
    summary: document.getElementById("summary").value,
  }));
  assert.equal(seen.bold, 0);
  assert.ok(seen.text.includes("Write <b>word</b> for bold."), seen.text);
  assert.equal(seen.alt, "The fish market");
  // Text fields show their text, not its escaped form.
  assert.equal(seen.title, "Tom & Jerry <3 <b>");
  assert.equal(seen.summary, "Fish & chips, 'fresh'");

  await saveAndWait(page);
  assert.deepEqual(await stored(id), before, "saving without a change writes nothing");

  // A change to the title alone: the body keeps its stored bytes.
  await page.fill("#title", "Tom & Jerry <3 <i>");
  await saveAndWait(page);
  const after = await stored(id);
  assert.equal(after.version, before.version + 1);
  assert.equal(after.props.title, "Tom &amp; Jerry &lt;3 &lt;i&gt;");
  assert.equal(after.props.body, before.props.body);
  assert.equal(after.props.summary, before.props.summary);
  assert.equal(await page.locator("#heading").textContent(), "Tom & Jerry <3 <i>");

  // Opened again (the page reloaded): still the same, and saving writes nothing.
  await page.reload();
  await page.locator("#body-editor").waitFor({ state: "visible" });
  assert.equal(await page.locator("#body-editor img").getAttribute("alt"), "The fish market");
  await saveAndWait(page);
  assert.deepEqual(await stored(id), after);

  // The source view shows the body's markup with its escaped text as written.
  await page.click('.toolbar button[data-command="source"]');
  assert.match(await page.locator("#body").inputValue(), /Write &lt;b&gt;word&lt;\/b&gt; for bold\./);

  // The translations screen, with text in both languages: each cell shows
  // its text, and saving without a change writes nothing.
  await api("PATCH", `/api/rsc/${id}`, {
    props: {
      title: { trans: { en: "Tom & Jerry <3", nl: "Tom & Jerry <3 (nl)" } },
      summary: { trans: { en: "Fish & chips", nl: "Vis & friet" } },
      body: { trans: { en: BODY, nl: "<p>Schrijf &lt;b&gt;woord&lt;/b&gt; voor vet.</p>" } },
    },
  });
  const translated = await stored(id);
  await page.goto(`${env.server.url}/admin/translate/${id}`);
  assert.equal(await page.locator("#title-nl").inputValue(), "Tom & Jerry <3 (nl)");
  assert.equal(await page.locator("#summary-nl").inputValue(), "Vis & friet");
  assert.equal(await page.locator("#body-en").inputValue(), translated.props.body.trans.en);
  assert.equal(await page.locator("#body-nl").inputValue(), "<p>Schrijf &lt;b&gt;woord&lt;/b&gt; voor vet.</p>");
  await page.click('#translations button[type="submit"]');
  await said(page, "#status", /^Saved in every language\.$/);
  assert.deepEqual(await stored(id), translated);
  await page.close();
});

test("restoring a version written as a draft brings its content back and keeps the page live", async () => {
  const made = await api("POST", "/api/rsc", {
    category: "article",
    props: { title: "Harbour news", body: "<p>First draft.</p>" },
  });
  const id = made.id;
  const published = await api("PATCH", `/api/rsc/${id}`, {
    published: true,
    props: { body: "<p>The final text.</p>" },
  });
  assert.equal(published.published, true);
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  const restore = page.getByRole("button", { name: "Restore version 1" });
  await restore.waitFor();
  // The question says what comes back and what stays.
  let asked = "";
  page.once("dialog", async (dialog) => {
    asked = dialog.message();
    await dialog.accept();
  });
  await Promise.all([page.waitForEvent("load"), restore.click()]);
  assert.match(asked, /published stays as it is now/);
  const now = await api("GET", `/api/rsc/${id}`);
  assert.equal(now.props.body, "<p>First draft.</p>");
  assert.equal(now.published, true, "still published");
  assert.equal(now.version, published.version + 1);
  const visitor = await fetch(`${env.server.url}/page/${id}`, { redirect: "follow" });
  assert.equal(visitor.status, 200);
  assert.match(await visitor.text(), /First draft\./);
  await page.close();
});

test("saved with a start date to come, the editor says scheduled and when, at once and after a reload", async () => {
  const made = await api("POST", "/api/rsc", { category: "article", props: { title: "Market day" } });
  const id = made.id;
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  assert.equal((await page.locator("#state").textContent()).trim(), "draft");
  await page.check("#published");
  await page.fill("#publication_start", "2031-05-01T09:30");
  await saveAndWait(page);
  // Without a reload: scheduled, with the moment it goes live.
  assert.match(await page.locator("#state").textContent(), /^scheduled /);
  assert.equal(await page.locator("#state").getAttribute("class"), "badge scheduled");
  const when = await page.locator("#state time").getAttribute("datetime");
  assert.equal(new Date(when).getTime(), new Date("2031-05-01T09:30").getTime());
  // Visitors do not see it yet, and a reload says the same.
  assert.equal((await fetch(`${env.server.url}/page/${id}`)).status, 404);
  await page.reload();
  assert.match(await page.locator("#state").textContent(), /^scheduled /);
  // Without the start date it is live: published.
  await page.fill("#publication_start", "");
  await saveAndWait(page);
  assert.equal((await page.locator("#state").textContent()).trim(), "published");
  await page.close();
});

test("the dashboard leads with the editors' work and keeps the server's figures below it", async () => {
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  const headings = await page.locator("main h2").evaluateAll((hs) => hs.map((h) => h.id));
  assert.deepEqual(headings, ["needs-title", "drafts-title", "scheduled-title", "comments-waiting-title", "recent-title", "running-title"]);
  // A draft is someone's unfinished page: no person's record (every account
  // has one, unpublished) is counted.
  const ids = await page.locator("#drafts li a").evaluateAll((as) => as.map((a) => a.getAttribute("href").match(/(\d+)$/)[1]));
  for (const id of ids) assert.notEqual((await api("GET", `/api/rsc/${id}`)).category, "person");
  const people = await api("GET", "/api/search?cat=person&pagelen=50");
  assert.ok(people.items.some((p) => !p.published), "the administrator's own record is a person not published");
  // The comments waiting, as the comments' own list counts them.
  const waiting = (await api("GET", "/api/comments?status=pending&limit=1")).counts.pending || 0;
  await page.locator("#comments-waiting [data-waiting]").filter({ hasText: String(waiting) }).waitFor();
  await page.close();
});

test("a tag is typed in the editor: Enter makes the keyword or uses the one there, and removes by its button", async () => {
  const made = await api("POST", "/api/rsc", { category: "article", props: { title: "Fish market reopens" } });
  const id = made.id;
  const existing = await api("POST", "/api/rsc", { category: "keyword", published: true, props: { title: "Harbour" } });
  await eventually("the search finds the keyword", async () =>
    (await api("GET", "/api/search?cat=keyword&text=harbour")).items.some((k) => k.id === existing.id),
  );
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  const tags = () => page.locator("#tag-list .tag").allTextContents();
  assert.deepEqual(await tags(), []);
  // A new tag: made on Enter (with a name that needs escaping), and connected.
  await page.fill("#tag-input", "Fish & chips");
  await page.press("#tag-input", "Enter");
  await said(page, "#tags-status", /^Tagged Fish & chips\.$/);
  // An existing one, typed in another case: used, not made again.
  await page.fill("#tag-input", "harbour");
  await page.press("#tag-input", "Enter");
  await said(page, "#tags-status", /^Tagged Harbour\.$/);
  assert.deepEqual(await tags(), ["Fish & chips", "Harbour"]);
  const edges = (await api("GET", `/api/rsc/${id}/edges`)).edges.filter((e) => e.predicate === "subject");
  assert.equal(edges.length, 2);
  assert.ok(edges.some((e) => e.object === existing.id), "the existing keyword");
  const made2 = await api("GET", `/api/rsc/${edges.find((e) => e.object !== existing.id).object}`);
  assert.equal(made2.category, "keyword");
  assert.equal(made2.props.title, "Fish &amp; chips");
  // After a reload the tags are there; one is removed by its button.
  await page.reload();
  assert.deepEqual(await tags(), ["Fish & chips", "Harbour"]);
  await page.click('button[aria-label="Remove the tag Harbour"]');
  await said(page, "#tags-status", /^Removed the tag Harbour\.$/);
  assert.deepEqual(await tags(), ["Fish & chips"]);
  assert.equal((await api("GET", `/api/rsc/${id}/edges`)).edges.filter((e) => e.predicate === "subject").length, 1);
  await page.close();
});

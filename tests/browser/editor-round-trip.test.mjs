// What an editor opens comes back byte for byte: a body with escaped markup,
// an image whose alt text has spaces (stored as `alt=The&#32;fish...`), a
// title with `&` and `<`, a summary of text. Opening the editor and saving
// without a change writes nothing (no new version, no revision); changing the
// title leaves the body's stored bytes alone; the translations screen is the
// same for texts in two languages. (Before the `source` filter the browser decoded the stored body inside
// its <textarea>: `&lt;b&gt;` became bold and the alt text became "The".)
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { logOn, said, serverAndBrowser } from "./helpers.mjs";

const TOKEN = "browser-test-token";
const PASSWORD = "browser-test-admin-password";

function prepare(dir) {
  const site = join(dir, "sites/default");
  cpSync(resolve(import.meta.dirname, "../../sites/default"), site, { recursive: true });
  const toml = join(site, "site.toml");
  writeFileSync(toml, readFileSync(toml, "utf8").replace('# token = "generated"', `token = "${TOKEN}"`));
}

const env = serverAndBrowser({ prepare, env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

async function api(method, path, body) {
  const res = await fetch(env.server.url + path, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
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

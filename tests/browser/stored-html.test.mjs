// Stored HTML renders as written and runs nothing wherever a template prints it:
// a body with links, titles and quotes keeps its hrefs and titles, and a summary
// made to break out of an attribute stays one inert alt text, in alt="..." and
// alt='...' (and with |e, which does nothing to a safe value).
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { serverAndBrowser } from "./helpers.mjs";

const TOKEN = "browser-test-token";

// The starter site, with an API token and a page that prints a resource's
// summary inside attributes. Its images do not exist: an injected onerror fires.
function prepare(dir) {
  const site = join(dir, "sites/default");
  cpSync(resolve(import.meta.dirname, "../../sites/default"), site, { recursive: true });
  const toml = join(site, "site.toml");
  writeFileSync(
    toml,
    readFileSync(toml, "utf8").replace('# token = "generated"', `token = "${TOKEN}"`) +
      '\n[[dispatch]]\nname = "probe"\npath = "/probe/{id}"\ncontroller = "template"\ntemplate = "probe.tpl"\n',
  );
  writeFileSync(
    join(site, "templates/probe.tpl"),
    `<!doctype html><html><head><title>probe</title></head><body>
{% set r = m.rsc[id|int] %}
<img id="dq" src="/missing-1.png" alt="{{ r.summary }}">
<img id="sq" src='/missing-2.png' alt='{{ r.summary }}'>
<img id="dqe" src="/missing-3.png" alt="{{ r.summary|e }}">
<div id="content">{{ r.body }}</div>
</body></html>`,
  );
}

const env = serverAndBrowser({ prepare });

async function patch(id, props) {
  const res = await fetch(`${env.server.url}/api/rsc/${id}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ props }),
  });
  assert.equal(res.status, 200, await res.text());
}

async function someArticleId() {
  const home = await (await fetch(env.server.url + "/")).text();
  return home.match(/href="(?:\/[a-z]{2})?\/page\/(\d+)/)[1];
}

// Every dialog an injected script could open, and a flag it could set.
async function watchedPage() {
  const page = await env.browser.newPage();
  const dialogs = [];
  page.on("dialog", async (d) => {
    dialogs.push(d.message());
    await d.dismiss();
  });
  return { page, dialogs };
}

const SUMMARY =
  `"><img src=x onerror="window.pwned=1;alert(1)">' onerror='window.pwned=2;alert(2)' x=' ` +
  `<a href=" onerror=alert(3) x" title='a" b'>y</a>`;

const BODY =
  `<p title="Tom &amp; &quot;Jerry&quot;">It's "quoted": ` +
  `<a href="/x?a=1&amp;b=2" title="it's here">link</a> ` +
  `<a href=" onerror=alert(4) x">odd</a></p>`;

test("a summary printed inside quoted attributes stays one inert attribute", async () => {
  const id = await someArticleId();
  await patch(id, { summary: SUMMARY, body: BODY });
  const { page, dialogs } = await watchedPage();
  await page.goto(`${env.server.url}/probe/${id}`);
  // Let the missing images fail to load: an onerror would run now.
  await page.waitForFunction(() =>
    [...document.images].every((i) => i.complete),
  );
  await page.waitForTimeout(300);
  assert.deepEqual(dialogs, []);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  const seen = await page.evaluate(() => ({
    images: [...document.images].map((i) => i.id),
    handlers: document.querySelectorAll("[onerror], [onmouseover]").length,
    alts: ["dq", "sq", "dqe"].map((id) => document.getElementById(id).getAttribute("alt")),
  }));
  // No image of the summary's own, no handler anywhere; each alt holds the
  // whole stored summary as text (its markup shows, none of it is parsed).
  assert.deepEqual(seen.images, ["dq", "sq", "dqe"]);
  assert.equal(seen.handlers, 0);
  for (const alt of seen.alts) {
    assert.ok(alt.startsWith('"><img src=x>'), alt);
    assert.ok(alt.endsWith("<a href= onerror=alert(3) x rel=noopener noreferrer title=a\" b>y</a>"), alt);
  }
  await page.close();
});

test("a stored body renders with its links, titles and quotes as written", async () => {
  const id = await someArticleId();
  await patch(id, { summary: "plain", body: BODY });
  const { page, dialogs } = await watchedPage();
  // The article page of the starter site prints the body as element content.
  await page.goto(`${env.server.url}/page/${id}`);
  const body = await page.evaluate(() => {
    const p = [...document.querySelectorAll("article p")].find((p) => p.title);
    const links = [...p.querySelectorAll("a")];
    return {
      title: p.getAttribute("title"),
      text: p.textContent,
      hrefs: links.map((a) => a.getAttribute("href")),
      titles: links.map((a) => a.getAttribute("title")),
      rels: links.map((a) => a.getAttribute("rel")),
      handlers: document.querySelectorAll("[onerror]").length,
    };
  });
  assert.equal(body.title, 'Tom & "Jerry"');
  assert.equal(body.text, `It's "quoted": link odd`);
  assert.deepEqual(body.hrefs, ["/x?a=1&b=2", " onerror=alert(4) x"]);
  assert.deepEqual(body.titles, ["it's here", null]);
  assert.deepEqual(body.rels, ["noopener noreferrer", "noopener noreferrer"]);
  assert.equal(body.handlers, 0);
  assert.deepEqual(dialogs, []);
  await page.close();
});

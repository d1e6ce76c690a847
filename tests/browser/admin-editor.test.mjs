// The admin's editor in a real browser, as the administrator: make an article
// on /admin/new, write it with the rich-text editor, publish it and see the
// public page and the home page change; its slug comes from the title's text;
// connections added, moved and removed; an earlier version compared and put
// back; a members-only article hidden from anonymous visitors. Screenshots for
// docs/admin.md (docs/admin/*.png).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { logOn as logOnAs, screenshotsDir, newArticle as newArticleIn, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const SHOTS = screenshotsDir("admin");
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function logOn(context) {
  return logOnAs(env.server, context, PASSWORD);
}

async function save(page) {
  const before = Number(await page.locator("#editor").getAttribute("data-version"));
  await page.click('#editor button[type="submit"]');
  await said(page, "#status", /^Saved\.$/);
  assert.ok(Number(await page.locator("#editor").getAttribute("data-version")) > before);
}

function newArticle(page, title) {
  return newArticleIn(env.server, page, title);
}

test("an article is made, written in rich text, published, and the site shows it", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const title = `Tom & Jerry ${Date.now()}`;
  await page.goto(env.server.url + "/admin/new");
  await page.screenshot({ path: join(SHOTS, "new.png") });
  const id = await newArticle(page, title);

  // The slug comes from the title as people read it.
  const pageUrl = await page.locator("#page-link").getAttribute("href");
  assert.match(pageUrl, new RegExp(`^/en/page/${id}/tom-jerry-\\d+$`));

  // A draft: anonymous visitors do not see it.
  assert.equal((await fetch(env.server.url + pageUrl)).status, 404);

  // Rich text: type, make a word bold with the toolbar.
  const body = page.locator("#body-editor");
  await body.click();
  await page.keyboard.type("Cheese is ");
  await page.click('.toolbar button[data-command="bold"]');
  await page.keyboard.type("essential");
  await page.click('.toolbar button[data-command="bold"]');
  await page.keyboard.type(" for mice.");
  await page.check("#published");
  await page.screenshot({ path: join(SHOTS, "editor.png") });
  await save(page);

  // The public page and the home page follow.
  const visitor = await (await env.browser.newContext()).newPage();
  assert.equal((await visitor.goto(env.server.url + pageUrl)).status(), 200);
  assert.equal(await visitor.locator("article h1").textContent(), title);
  assert.equal(await visitor.locator("article strong, article b").first().textContent(), "essential");
  await visitor.goto(env.server.url + "/");
  assert.ok((await visitor.content()).includes(title.replace("&", "&amp;")), "the home page lists it");

  // After a reload the editor holds the same rich text; the HTML source is one click away.
  await page.reload();
  assert.equal(await page.locator("#body-editor strong, #body-editor b").first().textContent(), "essential");
  await page.click('.toolbar button[data-command="source"]');
  assert.match(await page.locator("#body").inputValue(), /<(strong|b)>essential<\/(strong|b)>/);

  // A slug of one's own is kept when the title changes.
  await page.fill("#slug", "cat and mouse");
  await page.fill("#title", "A new title");
  await save(page);
  await page.reload();
  assert.equal(await page.locator("#page-link").getAttribute("href"), `/en/page/${id}/cat-and-mouse`);

  // Members only: gone for anonymous visitors, there for the administrator.
  await page.selectOption("#visibility", "members");
  await save(page);
  assert.equal((await visitor.goto(env.server.url + `/page/${id}`)).status(), 404);
  assert.equal((await page.goto(env.server.url + `/page/${id}`)).status(), 200);
  await context.close();
});

test("connections are added, moved and removed", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const stamp = Date.now();
  const first = await newArticle(page, `Linked first ${stamp}`);
  const second = await newArticle(page, `Linked second ${stamp}`);
  const id = await newArticle(page, `Links ${stamp}`);

  // The pivot indexes new resources in the background: find until both are there.
  for (const [n, object] of [["first", first], ["second", second]]) {
    await page.selectOption('#new-edge select[name="predicate"]', "relation");
    await page.fill('#new-edge input[name="text"]', `Linked ${n} ${stamp}`);
    const add = page.locator(`#edge-candidates button:has-text("Linked ${n}")`);
    for (let i = 0; i < 40 && (await add.count()) === 0; i++) {
      await page.click('#new-edge button[type="submit"]');
      await page.waitForTimeout(250);
    }
    await add.click();
    await said(page, "#edges-status", /^Added\./);
    await page.locator(`ul.edges li[data-object="${object}"]`).waitFor();
  }
  const order = async () =>
    (await (await page.request.get(`${env.server.url}/api/rsc/${id}/edges`)).json()).edges.map((e) => e.object);
  assert.deepEqual(await order(), [first, second]);
  await page.locator("#edges").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "edges.png") });

  // Down with the keyboard's button: the order changes, on the server too.
  await page.click(`button[aria-label="Move down: relation ${first}"]`);
  await said(page, "#edges-status", /^Moved\./);
  await page.waitForFunction(
    (second) => document.querySelector("ul.edges li").dataset.object === String(second),
    second,
  );
  assert.deepEqual(await order(), [second, first]);

  await page.click(`button[aria-label="Remove relation ${second}"]`);
  await said(page, "#edges-status", /^Removed\./);
  assert.deepEqual(await order(), [first]);
  await context.close();
});

test("an earlier version is compared with now and put back", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const id = await newArticle(page, "The first title");
  // None yet, said as such (not as a numbered item).
  await page.locator("#revisions-empty").waitFor({ state: "visible" });
  assert.equal(await page.locator("#revision-list li").count(), 0);
  await page.fill("#summary", "Said first");
  await save(page);
  await page.fill("#title", "The second title");
  await page.fill("#summary", "Said second");
  await save(page);

  // Each says who saved it and when, as people read it; the full date on hover.
  await page.waitForFunction(() => {
    const who = document.querySelector("#revision-list li a");
    return who && !who.textContent.startsWith("#");
  });
  const latest = page.locator("#revision-list li").first();
  assert.match(await latest.textContent(), /^Version \d+, saved by \S.* (now|\d+ seconds? ago) /);
  assert.match(await latest.locator("time").getAttribute("title"), /\d{4}/);
  assert.equal(await page.locator("#revisions-empty").isHidden(), true);

  // Newest first: the version before the last save has the first title.
  await page.locator("#revision-list li button:has-text('Compare')").first().waitFor();
  await page.locator("#revision-list li button:has-text('Compare')").first().click();
  assert.match(await page.locator("#revision-diff del").allTextContents().then((t) => t.join(" ")), /first/);
  assert.match(await page.locator("#revision-diff ins").allTextContents().then((t) => t.join(" ")), /second/);
  await page.locator("#revision-diff").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "revisions.png") });

  page.once("dialog", (d) => d.accept());
  await Promise.all([page.waitForLoadState("load"), page.locator("#revision-list li button:has-text('Restore')").first().click()]);
  await page.waitForFunction(() => document.getElementById("title").value === "The first title");
  assert.equal(await page.locator("#summary").inputValue(), "Said first");
  const stored = await (await page.request.get(`${env.server.url}/api/rsc/${id}`)).json();
  assert.equal(stored.props.title, "The first title");
  await context.close();
});

test("a publication window hides a page outside it", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const id = await newArticle(page, "Only for a while");
  await page.check("#published");
  await save(page);
  const anonymous = () => fetch(`${env.server.url}/page/${id}`).then((r) => r.status);
  assert.equal(await anonymous(), 200);
  const local = (ms) => {
    const t = new Date(Date.now() + ms);
    return new Date(t.getTime() - t.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  };
  // Closed since yesterday: gone.
  await page.fill("#publication_end", local(-86400000));
  await save(page);
  assert.equal(await anonymous(), 404);
  const stored = await (await page.request.get(`${env.server.url}/api/rsc/${id}`)).json();
  assert.ok(Date.parse(stored.publication_end) < Date.now(), stored.publication_end);
  // Opens tomorrow: still gone; no window: back.
  await page.fill("#publication_end", "");
  const opens = local(86400000);
  await page.fill("#publication_start", opens);
  await save(page);
  assert.equal(await anonymous(), 404);
  await page.reload();
  assert.equal(await page.locator("#publication_start").inputValue(), opens);
  await page.fill("#publication_start", "");
  await save(page);
  assert.equal(await anonymous(), 200);
  await context.close();
});

test("the editor fits a phone-sized screen", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await logOn(context);
  await page.setViewportSize({ width: 390, height: 844 });
  const id = await newArticle(page, "On a phone");
  for (const path of ["/admin/new", `/admin/edit/${id}`]) {
    await page.goto(env.server.url + path);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `${path} is ${overflow}px wider than the screen`);
  }
  await context.close();
});

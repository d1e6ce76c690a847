// The admin's site screens in a real browser, as the administrator: move a
// category, add a user and put them in a group (who then gets into the
// admin), change an access rule and see a page disappear for anonymous
// visitors, publish drafts in bulk, change a setting, purge a page, make,
// download and restore a backup. Each screen is photographed for
// docs/admin.md (docs/admin/*.png).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, logOn as logOnAs, said, screenshotsDir, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const SHOTS = screenshotsDir("admin");
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function logOn(context, username = "admin", password = PASSWORD) {
  return logOnAs(env.server, context, password, username);
}

/// Calls the JSON API from the page, with its session and CSRF token.
function api(page, method, url, body) {
  return page.evaluate(
    async ([method, url, body]) => {
      const res = await fetch(url, {
        method,
        headers: {
          "Content-Type": "application/json",
          "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
    [method, url, body],
  );
}

async function shoot(page, name) {
  await page.screenshot({ path: join(SHOTS, name), fullPage: false });
}

test("a category moves under another, with everything below it", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  await page.click('nav[aria-label="Admin"] a:has-text("Categories")');
  await page.waitForURL(env.server.url + "/admin/categories");
  await shoot(page, "categories.png");

  // news is under text; move it under event with the keyboard form.
  const news = page.locator('li[data-name="news"]').first();
  assert.equal(await page.locator('li[data-name="text"] li[data-name="news"]').count(), 1);
  await news.locator('select[name="parent"]').first().selectOption("event");
  // The move is saved, then the page reloads; a refusal says why instead.
  await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/api/categories/news") && r.request().method() === "PATCH"),
    news.locator('form.move-category button').first().click(),
  ]);
  await page.waitForFunction(() =>
    document.querySelector('li[data-name="event"] li[data-name="news"]') ||
    /Not moved/.test((document.getElementById("category-status") || {}).textContent || ""), null, { timeout: 30000 });
  assert.doesNotMatch(await page.locator("#category-status").textContent(), /Not moved/);
  assert.equal(await page.locator('li[data-name="text"] li[data-name="news"]').count(), 0);

  // The data model says the same: a news item is an event now, not text.
  const cats = (await api(page, "GET", "/api/categories")).body.categories;
  assert.equal(cats.find((c) => c.name === "news").parent, "event");

  // A cycle is refused with a message, and nothing moves (the form does not
  // even offer a category's own descendants).
  assert.equal(await page.locator('li[data-name="text"] select[name="parent"]').first().locator('option[value="article"]').count(), 0);
  const refused = await api(page, "PATCH", "/api/categories/text", { parent: "article" });
  assert.equal(refused.status, 400);
  assert.match(refused.body.detail, /cycle/);
  await context.close();
});

test("a predicate limited to some categories refuses the others", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const article = async (title) => (await api(page, "POST", "/api/rsc", { category: "article", props: { title } })).body.id;
  const [a, b] = [await article("Relates"), await article("Related")];
  const person = (await api(page, "POST", "/api/rsc", { category: "person", props: { title: "Somebody" } })).body.id;

  await page.goto(env.server.url + "/admin/predicates");
  const relation = page.locator('form[data-name="relation"]');
  await relation.waitFor();
  await relation.locator('select[name="objects"]').selectOption(["person"]);
  await relation.locator('button[type="submit"]').click();
  await said(page, "#predicate-status", /^Saved relation\./);
  await shoot(page, "predicates.png");
  const refused = await api(page, "POST", `/api/rsc/${a}/edges`, { predicate: "relation", object: b });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.equal((await api(page, "POST", `/api/rsc/${a}/edges`, { predicate: "relation", object: person })).status, 201);

  // None selected: any category again (after a reload, the screen shows what is stored).
  await page.reload();
  const objects = page.locator('form[data-name="relation"] select[name="objects"]');
  await objects.waitFor();
  assert.deepEqual(await objects.evaluate((s) => [...s.selectedOptions].map((o) => o.value)), ["person"]);
  await objects.selectOption([]);
  await page.locator('form[data-name="relation"] button[type="submit"]').click();
  await said(page, "#predicate-status", /^Saved relation\./);
  assert.equal((await api(page, "POST", `/api/rsc/${a}/edges`, { predicate: "relation", object: b })).status, 201);
  await context.close();
});

test("a manager adds a user, puts them in the editors, and they get into the admin", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  await page.goto(env.server.url + "/admin/users");
  await page.fill('#new-user input[name="username"]', "ann");
  await page.fill('#new-user input[name="password"]', "ann-password-1");
  await page.fill('#new-user input[name="email"]', "ann@example.org");
  await page.selectOption('#new-user select[name="group"]', "members");
  await Promise.all([page.waitForLoadState("load"), page.click('#new-user button[type="submit"]')]);
  const editors = page.locator('input[aria-label="ann in Editors"]');
  await editors.waitFor();
  assert.equal(await editors.isChecked(), false);
  assert.equal(await page.locator('input[aria-label="ann in Members"]').isChecked(), true);

  // Before: ann may not enter the admin.
  const annContext = await env.browser.newContext();
  const ann = await annContext.newPage();
  await ann.goto(env.server.url + "/logon");
  await ann.fill("#username", "ann");
  await ann.fill("#password", "ann-password-1");
  await Promise.all([ann.waitForURL(env.server.url + "/en/"), ann.click('form.auth-form button[type="submit"]')]);
  const refusedAtFirst = await ann.goto(env.server.url + "/admin");
  assert.equal(refusedAtFirst.status(), 403, `${refusedAtFirst.url()}: ${await ann.content()}`);

  await editors.check();
  await said(page, "#users-status", /Added ann to Editors/);
  await shoot(page, "users.png");
  await page.reload();
  assert.equal(await page.locator('input[aria-label="ann in Editors"]').isChecked(), true);

  // After: ann's groups are read again within the session cache's 10 seconds.
  let entered = 0;
  for (let i = 0; i < 60 && entered !== 200; i++) {
    entered = (await ann.goto(env.server.url + "/admin")).status();
    if (entered !== 200) await ann.waitForTimeout(500);
  }
  assert.equal(entered, 200);
  // An editor sees no users screen, and may not make anyone a manager.
  assert.equal(await ann.locator('nav[aria-label="Admin"] a:has-text("Users")').count(), 0);
  assert.equal((await ann.goto(env.server.url + "/admin/users")).status(), 403);
  const groups = (await api(page, "GET", "/api/search?cat=acl_user_group&pagelen=20")).body.items;
  const managers = groups.find((g) => g.name === "acl_user_group_managers");
  await ann.goto(env.server.url + "/admin");
  const escalate = await api(ann, "POST", `/api/rsc/${await ann.evaluate(async () => (await (await fetch("/api/auth/me")).json()).user)}/edges`, {
    predicate: "hasusergroup",
    object: managers.id,
  });
  assert.ok([403, 404].includes(escalate.status), `${escalate.status}`);
  await annContext.close();
  await context.close();
});

test("a rule change hides a page from anonymous visitors at once, and going back shows it again", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const found = (await api(page, "GET", "/api/search?cat=article&pagelen=50")).body.items.find(
    (r) => r.published && r.visibility === "public",
  );
  const articleUrl = `/page/${found.id}`;

  const anonymous = await env.browser.newContext();
  const visitor = await anonymous.newPage();
  assert.equal((await visitor.goto(env.server.url + articleUrl)).status(), 200);
  assert.equal((await visitor.goto(env.server.url + articleUrl)).status(), 200); // now from the page cache

  await page.goto(env.server.url + "/admin/rules");
  const row = page.locator("#rules tbody tr").first();
  await row.waitFor();
  assert.equal(await row.locator(".rule-group").inputValue(), "anonymous");
  await shoot(page, "rules.png");
  // The authors' rule holds only for their own: the column says so, and it
  // is kept when the rules are saved.
  const authors = page.locator("#rules tbody tr").filter({ has: page.locator('.rule-group option[value="authors"]:checked') });
  assert.equal(await authors.locator(".rule-own").isChecked(), true, "the authors' rule is for their own");
  assert.equal(await page.locator("#rules tbody tr .rule-own:checked").count(), 1, "only that one");
  await row.locator(".remove-rule").click();
  await page.click('#rules button[type="submit"]');
  await said(page, "#rules-status", /Saved: the new rules are in force/);
  assert.match(await page.locator("#rules-source").textContent(), /kept in the site's database/);
  const saved = (await api(page, "GET", "/api/access/rules")).body.rules;
  assert.deepEqual(
    saved.filter((r) => r.own).map((r) => r.group),
    ["authors"],
    "own kept for the authors' rule alone",
  );

  assert.equal((await visitor.goto(env.server.url + articleUrl)).status(), 404);
  // The administrator still sees it.
  assert.equal((await page.goto(env.server.url + articleUrl)).status(), 200);

  await page.goto(env.server.url + "/admin/rules");
  page.once("dialog", (d) => d.accept());
  await page.click("#forget-rules");
  await said(page, "#rules-status", /site.toml's apply/);
  assert.equal((await visitor.goto(env.server.url + articleUrl)).status(), 200);
  await anonymous.close();
  await context.close();
});

test("a manager views the site as anonymous visitors see it, and stops", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const made = await api(page, "POST", "/api/rsc", { category: "article", props: { title: "Not yet public" } });
  assert.equal(made.status, 201);
  const draft = `${env.server.url}/page/${made.body.id}`;
  assert.equal((await page.goto(draft)).status(), 200, "the administrator sees their draft");

  await page.goto(env.server.url + "/admin/rules");
  await page.selectOption('#view-as select[name="group"]', "anonymous");
  const [opened] = await Promise.all([context.waitForEvent("page"), page.click('#view-as button[type="submit"]')]);
  await opened.waitForLoadState();
  await said(page, "#view-as-status", /as anonymous see it/);
  await shoot(page, "view-as.png");
  // The site that opened says whose view it is, with the way back.
  const bar = opened.locator(".viewing-as");
  assert.match(await bar.innerText(), /Viewing the site as the group anonymous/);
  assert.equal(await bar.locator("a").getAttribute("href"), "/admin/rules#view-as");
  const viewer = await context.newPage();
  assert.equal((await viewer.goto(draft)).status(), 404, "hidden from anonymous visitors");
  // The admin stays theirs, and Stop brings the site back.
  await page.click("#view-as-stop");
  await said(page, "#view-as-status", /as you see it/);
  assert.equal((await viewer.goto(draft)).status(), 200);
  await viewer.goto(env.server.url + "/");
  assert.equal(await viewer.locator(".viewing-as").count(), 0, "no bar once stopped");
  await context.close();
});

test("the dashboard shows the site's figures live", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  for (let i = 0; i < 5; i++) await fetch(env.server.url + "/about");
  await said(page, "#figures-status", /^Live, as of/);
  await page.waitForFunction(() => /\/s$/.test(document.querySelector('[data-figure="requests_per_s"]').textContent));
  assert.match(await page.locator('[data-figure="database"]').textContent(), /^\d+ of \d+$/);
  assert.match(await page.locator('[data-figure="push_clients"]').textContent(), /^\d+$/);
  assert.match(await page.locator('[data-figure="refused"]').textContent(), /renders: \d+/);
  await shoot(page, "dashboard.png");
  // Several nodes' figures (each node sends its own) are shown as one.
  const summed = await page.evaluate(() => Admin.sumFigures([
    { node: "web1", requests_per_s: 30, renders_per_s: 2, page_cache_hit_ratio: 0.9, database: { busy: 1, open: 4 }, more: { push_clients: 3 }, refused: { renders: 1, database: 0 } },
    { node: "web2", requests_per_s: 10, renders_per_s: 1, page_cache_hit_ratio: 0.5, database: { busy: 0, open: 2 }, more: { push_clients: 5 }, refused: { renders: 2, media_resizes: 4 } },
    { node: "web3", requests_per_s: 0, renders_per_s: 0, page_cache_hit_ratio: null, database: { busy: 0, open: 1 }, more: {}, refused: {} },
  ]));
  assert.deepEqual(summed, {
    requests_per_s: 40,
    renders_per_s: 3,
    page_cache_hit_ratio: 0.8,
    database: { busy: 1, open: 7 },
    more: { push_clients: 8 },
    refused: { renders: 3, database: 0, media_resizes: 4 },
  });
  await context.close();
});

test("an administrator turns a module off and on, and the site follows", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  await page.goto(env.server.url + "/admin/modules");
  const seo = page.locator('#module-list input[value="seo"]');
  await seo.waitFor();
  assert.equal(await seo.isChecked(), true);
  assert.equal(await page.locator('#module-list input[value="auth"]').isDisabled(), true);
  await seo.uncheck();
  await page.click('#modules button[type="submit"]');
  await said(page, "#modules-status", /^Saved/);
  await shoot(page, "modules.png");
  assert.equal((await fetch(env.server.url + "/sitemap.xml")).status, 404);
  await page.locator('#module-list input[value="seo"]').check();
  await page.click('#modules button[type="submit"]');
  await said(page, "#modules-status", /^Saved/);
  assert.equal((await fetch(env.server.url + "/sitemap.xml")).status, 200);
  await context.close();
});

test("drafts are published in bulk from the resource list", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const word = `bulkdraft${Date.now()}`;
  for (const n of [1, 2]) {
    const made = await api(page, "POST", "/api/rsc", { category: "article", props: { title: `${word} ${n}` } });
    assert.equal(made.status, 201);
  }
  // The pivot indexes new resources in the background: wait for the text search to find both.
  await page.waitForFunction(
    async (word) => (await (await fetch(`/api/search?text=${word}`)).json()).total === 2,
    word,
    { polling: 200, timeout: 20000 },
  );
  // The list reads the same index, as the page is asked again (under load the
  // second draft's entry can land between the two reads).
  await eventually("the list finds both drafts", async () => {
    await page.goto(`${env.server.url}/admin/resources?text=${word}&status=draft`);
    return /^2 found/.test(await page.locator("#found").textContent());
  }, 20000);
  await page.check("#select-all");
  await shoot(page, "resources.png");
  await Promise.all([page.waitForLoadState("load"), page.click('#bulk button[value="publish"]')]);
  await page.waitForFunction(() => /^0 found/.test(document.querySelector("#found").textContent));
  await eventually("the list finds both published", async () => {
    await page.goto(`${env.server.url}/admin/resources?text=${word}&status=published`);
    return /^2 found/.test(await page.locator("#found").textContent());
  }, 20000);
  await context.close();
});

test("a setting changed in the admin shows on the pages that read it", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  await page.goto(env.server.url + "/admin/settings");
  await page.fill('#new-setting input[name="key"]', "site_title");
  await page.fill('#new-setting input[name="value"]', "Tea Room");
  await page.click('#new-setting button[type="submit"]');
  await said(page, "#settings-status", /Added site_title/);
  await shoot(page, "settings.png");
  await page.goto(env.server.url + "/admin");
  assert.match(await page.title(), /Tea Room$/);
  // Bulwark's own keys are shown, never changed here.
  const refused = await api(page, "PATCH", "/api/config", { settings: { "access.rules": "[]" } });
  assert.equal(refused.status, 400);
  await context.close();
});

test("a purged page is rendered again for its next visitor", async () => {
  const token = readFileSync(join(env.server.dir, "sites/default/site.toml"), "utf8").match(/^token = "([^"]+)"/m)[1];
  const renders = async () =>
    (await (await fetch(env.server.url + "/api/stats", { headers: { Authorization: `Bearer ${token}` } })).json()).renders;
  await fetch(env.server.url + "/about");
  const cached = await renders();
  await fetch(env.server.url + "/about");
  assert.equal(await renders(), cached, "the second visit came from the page cache");

  const context = await env.browser.newContext();
  const page = await logOn(context);
  await page.goto(env.server.url + "/admin/cache");
  await page.fill('#purge-url input[name="url"]', "/about");
  await page.click('#purge-url button[type="submit"]');
  await said(page, "#cache-status", /Purged \/about/);
  await shoot(page, "cache.png");
  const before = await renders();
  await fetch(env.server.url + "/about");
  assert.equal(await renders(), before + 1, "the visit after the purge rendered the page");
  await context.close();
});

test("a backup is made, downloaded, and restored with a confirmation", async () => {
  const context = await env.browser.newContext({ acceptDownloads: true });
  const page = await logOn(context);
  await page.goto(env.server.url + "/admin/backups");
  await page.click("#make-backup");
  await said(page, "#backups-status", /^Made default-/);
  const link = page.locator("#backup-list a").first();
  const name = await link.textContent();
  await shoot(page, "backups.png");

  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  assert.equal(download.suggestedFilename(), name);
  const bytes = readFileSync(await download.path());
  assert.deepEqual([...bytes.subarray(0, 2)], [0x1f, 0x8b], "a gzipped archive");

  // Something made after the backup is gone once it is restored.
  const made = await api(page, "POST", "/api/rsc", { category: "article", published: true, props: { title: "After the backup" } });
  assert.equal(made.status, 201);
  await page.click(`button[aria-label="Restore ${name}"]`);
  await page.fill('#restore-dialog input[name="confirm"]', "not the site");
  await page.click('#restore-dialog button[value="restore"]');
  await said(page, "#restore-dialog .message", /Type the site's name/);
  await shoot(page, "restore.png");
  await page.fill('#restore-dialog input[name="confirm"]', "default");
  await page.click('#restore-dialog button[value="restore"]');
  await said(page, "#backups-status", /^Restored /);
  const gone = await fetch(`${env.server.url}/page/${made.body.id}`);
  assert.equal(gone.status, 404);
  await context.close();
});

test("the site screens fit a phone-sized screen", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await logOn(context);
  await page.setViewportSize({ width: 390, height: 844 });
  for (const screen of ["", "categories", "users", "rules", "settings", "modules", "backups"]) {
    await page.goto(`${env.server.url}/admin/${screen}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `${screen} is ${overflow}px wider than the screen`);
  }
  await page.goto(env.server.url + "/admin/users");
  await shoot(page, "users-phone.png");
  await context.close();
});

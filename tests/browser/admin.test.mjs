// The admin's editor in a real browser: the administrator logs on, finds an
// article in /admin/resources, changes its title and the public page shows it;
// the same article open in two tabs: the second save is held back with both
// versions shown, and the first one's change stands.
import { test } from "node:test";
import assert from "node:assert/strict";
import { logOn as logOnAs, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function logOn(context) {
  return logOnAs(env.server, context, PASSWORD);
}

test("an editor changes an article's title; a concurrent edit is shown, not overwritten", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  assert.equal(await page.locator("h1").textContent(), "Dashboard");

  // Find an article and open it in the editor.
  await page.click('nav[aria-label="Admin"] a:has-text("Resources")');
  await page.waitForURL(env.server.url + "/admin/resources");
  await page.selectOption('select[name="cat"]', "article");
  await Promise.all([page.waitForURL(/cat=article/), page.click('form.filter button[type="submit"]')]);
  // When each was changed, as people read it; the full date on hover.
  const changed = page.locator("table time").first();
  assert.match(await changed.textContent(), /ago|now|yesterday|last /);
  assert.match(await changed.getAttribute("title"), /\d{4}/);
  const edit = page.locator('table a[href^="/admin/edit/"]').first();
  const href = await edit.getAttribute("href");
  await Promise.all([page.waitForURL(env.server.url + href), edit.click()]);
  const view = await page.locator('main a:has-text("View the page")').getAttribute("href");

  // A second tab opens the same article before the first saves.
  const other = await context.newPage();
  await other.goto(env.server.url + href);

  const title = `Edited in the admin ${Date.now()}`;
  await page.fill("#title", title);
  await page.click('#editor button[type="submit"]');
  await page.waitForFunction(() => document.getElementById("status").textContent === "Saved.");
  assert.equal(await page.locator("#heading").textContent(), title);
  const pub = await context.newPage();
  await pub.goto(env.server.url + view);
  assert.equal(await pub.locator("article h1").textContent(), title);

  // The second tab still holds the old version: its save is refused and says so.
  await other.fill("#title", "Lost update");
  await other.click('#editor button[type="submit"]');
  await other.waitForFunction(() => /someone else saved this page meanwhile/.test(document.getElementById("status").textContent));
  assert.equal(await other.locator("#conflict").isVisible(), true, "both versions are shown");
  await pub.reload();
  assert.equal(await pub.locator("article h1").textContent(), title);

  // Saving again from the first tab works: it knows the new version.
  const before = Number(await page.locator("#editor").getAttribute("data-version"));
  await page.fill("#summary", "A second change");
  await page.click('#editor button[type="submit"]');
  await page.waitForFunction(
    (v) => Number(document.getElementById("editor").dataset.version) > v &&
      document.getElementById("status").textContent === "Saved.",
    before,
  );
  await context.close();
});

// The import screen in a real browser: an administrator uploads WordPress's
// own export, watches the import's progress come in over push, and reads the
// report (counts, what was skipped and why, the shortcodes kept as text);
// the old permalinks then answer 301. The screen is axe-clean and fits 390 px.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { accessibilityProblems, logOn as logOnAs, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-import-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });
const EXPORT = new URL("../../modules/import/tests/fixtures/wordpress/export.xml", import.meta.url);

test("a WordPress export uploaded in the admin is imported with its progress shown and its report read", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  await page.click('nav[aria-label="Admin"] a:has-text("Import")');
  await page.waitForURL(env.server.url + "/admin/import");
  assert.deepEqual(await accessibilityProblems(page), []);

  // The progress as it was pushed: every message the page showed.
  await page.evaluate(() => {
    window.seenStages = [];
    new MutationObserver(() => window.seenStages.push(document.getElementById("import-stage").textContent))
      .observe(document.getElementById("import-stage"), { childList: true, characterData: true, subtree: true });
  });
  await page.setInputFiles('#import-form input[type="file"]', {
    name: "export.xml", mimeType: "text/xml", buffer: readFileSync(EXPORT),
  });
  await page.keyboard.press("Tab");
  await page.click('#import-form button[type="submit"]');
  await said(page, "#import-status", /The import is done: its report is below/);
  const stages = await page.evaluate(() => window.seenStages);
  assert.ok(stages.some((s) => /^Posts and pages/.test(s)), `the stages came in: ${stages.join(" | ")}`);

  const row = async (kind) => (await page.locator(`#import-counts tr:has(th:text-is("${kind}")) td`).allTextContents());
  assert.deepEqual(await row("post"), ["10", "0", "0", "1"]);
  assert.deepEqual(await row("page"), ["7", "0", "0", "0"]);
  assert.deepEqual(await row("comment"), ["6", "0", "0", "1"]);
  assert.match(await page.locator("#import-skipped").textContent(), /post 16 "Thrown away": it is in the trash/);
  assert.match(await page.locator("#import-notes").textContent(), /Members only.*password/);
  assert.match(await page.locator("#import-shortcodes").textContent(), /\[contact-form-7\] \(posts: 1\)/);
  // Without the files: the attachments are skipped, and the report says why.
  assert.match(await page.locator("#import-skipped").textContent(), /attachment 5 "Red square": its file was not brought/);
  assert.deepEqual(await accessibilityProblems(page), []);

  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the screen fits 390 px (${overflow} px too wide)`);

  const moved = await fetch(env.server.url + "/2024/05/hello-harbour/", { redirect: "manual" });
  assert.equal(moved.status, 301);
  const article = await (await fetch(env.server.url + moved.headers.get("location"))).text();
  assert.match(article, /Hello from the harbour/);

  // The same file again: nothing changes.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.setInputFiles('#import-form input[type="file"]', {
    name: "export.xml", mimeType: "text/xml", buffer: readFileSync(EXPORT),
  });
  await page.click('#import-form button[type="submit"]');
  await said(page, "#import-status", /The import is done/);
  assert.deepEqual(await row("post"), ["0", "0", "10", "1"]);
  await context.close();
});

test("a broken export stops with its own name and place in the words, never the server's paths", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  await page.goto(env.server.url + "/admin/import");
  const whole = readFileSync(EXPORT, "utf8");
  const cut = whole.slice(0, whole.indexOf("</channel>") - 200);
  await page.setInputFiles('#import-form input[type="file"]', {
    name: "harbour-export.xml", mimeType: "text/xml", buffer: Buffer.from(cut),
  });
  await page.click('#import-form button[type="submit"]');
  await said(page, "#import-status", /The import stopped: harbour-export\.xml, line \d+, column \d+/);
  const said_ = await page.locator("#import-status").textContent();
  assert.doesNotMatch(said_, /\/tmp|\/data\/|wordpress-\d+-/, said_);
  await context.close();
});

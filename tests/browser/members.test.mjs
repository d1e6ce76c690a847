// Logging on and off in a real browser: the starter site's members-only article
// is a 404 for the anonymous visitor, readable once the administrator has logged
// on through the /logon form, and a 404 again after the Log off button, also for
// a replay of the old session cookie. The session cookie is out of the reach of
// the page's scripts (HttpOnly).
import { test } from "node:test";
import assert from "node:assert/strict";
import { serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const MEMBERS_ONLY = "/page/members_corner";
const TITLE = "For members";

const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

async function assertHidden(page) {
  const res = await page.goto(env.server.url + MEMBERS_ONLY);
  assert.equal(res.status(), 404);
  // The site's own 404 page: its header and navigation, not a word of the article.
  assert.equal(await page.locator("h1").textContent(), "Not found");
  assert.doesNotMatch(await page.content(), /Only logged-on members see this article/);
}

test("a member logs on, reads the members-only article, logs off and no longer can", async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();

  await assertHidden(page);

  // Log on through the nav's link and the form; it sends the browser back to
  // the front page (`/`, which is the visitor's language's: `/en/`).
  await page.goto(env.server.url + "/");
  await page.click('nav a[href="/logon"]');
  await page.waitForURL(env.server.url + "/logon");
  await page.fill("#username", "admin");
  await page.fill("#password", PASSWORD);
  await Promise.all([page.waitForURL(env.server.url + "/en/"), page.click('form.auth-form button[type="submit"]')]);
  assert.equal(await page.locator('nav a[href="/logoff"]').textContent(), "Log off");

  const cookies = await context.cookies(env.server.url);
  const session = cookies.find((c) => c.name === "bulwark_session");
  assert.ok(session, `no session cookie among ${JSON.stringify(cookies.map((c) => c.name))}`);
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, "Lax");
  assert.equal(session.path, "/");
  assert.match(session.value, /^[0-9a-f]{64}$/);
  assert.doesNotMatch(await page.evaluate(() => document.cookie), /bulwark_session/);

  const res = await page.goto(env.server.url + MEMBERS_ONLY);
  assert.equal(res.status(), 200);
  assert.equal(await page.locator("article h1").textContent(), TITLE);
  assert.match(await page.title(), new RegExp(`^${TITLE}`));

  // Log off: the nav link leads to the page with the button (a CSRF-protected POST).
  await page.click('nav a[href="/logoff"]');
  await page.waitForURL(env.server.url + "/logoff");
  await Promise.all([page.waitForURL(env.server.url + "/en/"), page.click('form[action="/logoff"] button[type="submit"]')]);
  assert.equal(await page.locator('nav a[href="/logon"]').textContent(), "Log on");
  const left = (await context.cookies(env.server.url)).filter((c) => c.name === "bulwark_session" && c.value);
  assert.deepEqual(left, []);

  await assertHidden(page);

  // The session ended on the server, not only in this browser: its old cookie
  // gets the anonymous answer.
  const replay = await fetch(env.server.url + MEMBERS_ONLY, { headers: { Cookie: `bulwark_session=${session.value}` } });
  assert.equal(replay.status, 404);
  assert.doesNotMatch(await replay.text(), /Only logged-on members see this article/);

  await context.close();
});

// The voting site (sites/voting) in a real browser: the theme filter answers over
// Ajax and keeps the voter's picks across themes, a fourth pick is not possible,
// the form shows the three picks and names a bad field, the vote lands on the
// confirmation page, and the administrator's totals page counts it live over push.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const root = resolve(import.meta.dirname, "../..");

const env = serverAndBrowser({
  env: { BULWARK_ADMIN_PASSWORD: PASSWORD },
  prepare(dir) {
    const site = join(dir, "sites/voting");
    cpSync(join(root, "sites/voting"), site, {
      recursive: true,
      filter: (src) => !src.endsWith("/data"),
    });
    // The only site: it answers whatever host the browser asks for.
    const toml = join(site, "site.toml");
    writeFileSync(toml, readFileSync(toml, "utf8").replace('name = "voting"', 'name = "voting"\ndefault = true'));
  },
});

async function adminTotals() {
  const context = await env.browser.newContext({ locale: "en-GB" });
  const page = await context.newPage();
  await page.goto(env.server.url + "/admin/votes");
  await page.waitForURL(/\/logon/);
  await page.fill("#username", "admin");
  await page.fill("#password", PASSWORD);
  await Promise.all([page.waitForURL(env.server.url + "/admin/votes"), page.click('button[type="submit"]')]);
  await page.waitForSelector('#push-state[data-state="connected"]', { timeout: 10000 });
  return { context, page };
}

test("a voter picks three across the filter, votes, and the totals follow live", async () => {
  const admin = await adminTotals();
  const before = Number(await admin.page.textContent("#votes"));
  await admin.page.waitForTimeout(300); // let the subscription settle

  const context = await env.browser.newContext({ locale: "en-GB" });
  const page = await context.newPage();
  await page.goto(env.server.url + "/");
  assert.equal(await page.textContent("h1"), "Vote for a better Netherlands");
  await Promise.all([page.waitForURL(env.server.url + "/projects"), page.click("a.button")]);
  assert.equal(await page.locator(".project").count(), 12);
  await page.evaluate(() => (window.notReloaded = true));

  // The filter fetches one theme's list without leaving the page.
  await page.click('.filter a[data-theme="project_care"]');
  await page.waitForSelector('#list ul[data-theme="project_care"]');
  assert.equal(await page.locator(".project").count(), 3);
  const care = await page.locator(".project input").evaluateAll((boxes) => boxes.map((b) => b.value));
  await page.check(`.project input[value="${care[0]}"]`);
  await page.check(`.project input[value="${care[1]}"]`);
  assert.match(await page.textContent("#picked"), /^2 /);

  // Another theme: the picks are kept; the third is the last one allowed.
  await page.click('.filter a[data-theme=""]');
  await page.waitForSelector('#list ul[data-theme="project"]');
  assert.equal(await page.locator(".project").count(), 12);
  assert.equal(await page.isChecked(`.project input[value="${care[0]}"]`), true);
  const others = (await page.locator(".project input").evaluateAll((boxes) => boxes.map((b) => b.value))).filter(
    (v) => !care.includes(v),
  );
  await page.check(`.project input[value="${others[0]}"]`);
  assert.equal(await page.isDisabled(`.project input[value="${others[1]}"]`), true);
  assert.equal(await page.evaluate(() => window.notReloaded), true);
  const picked = [care[0], care[1], others[0]];

  await Promise.all([page.waitForURL(/\/vote\?/), page.click('#pick button[type="submit"]')]);
  assert.equal(await page.locator(".picks li").count(), 3);
  const query = new URL(page.url()).searchParams.getAll("p");
  assert.deepEqual([...query].sort(), [...picked].sort());

  // A bad address is named, and what was typed stays.
  await page.fill("#name", "Browser Voter");
  await page.fill("#email", "not an address");
  await page.fill("#postcode", "1234 AB");
  await page.click('form.form button[type="submit"]');
  await page.waitForSelector("#error-email");
  assert.equal(await page.inputValue("#name"), "Browser Voter");

  await page.fill("#email", `browser-${Date.now()}@example.nl`);
  await Promise.all([page.waitForURL(/\/vote\/thanks\//), page.click('form.form button[type="submit"]')]);
  assert.match(await page.textContent("#thanks"), /Thank you for voting, Browser Voter/);
  assert.equal(await page.locator(".picks li").count(), 3);

  // The administrator's page counted it without a reload.
  await admin.page.waitForFunction((n) => Number(document.getElementById("votes").textContent) === n, before + 1, {
    timeout: 10000,
  });
  for (const id of picked) {
    assert.equal(await admin.page.textContent(`tr[data-project="${id}"] .n`), "1");
  }
  await context.close();
  await admin.context.close();
});

// Menus in a real browser: the administrator opens the starter's main menu,
// adds a page, drags it to the top, nests an item under another with the
// keyboard, and saves; the public site's navigation shows it; renaming the
// page changes the navigation of the cached page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, logOn as logOnAs, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-menus-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

/// Calls the JSON API from a logged-on page, with its CSRF token.
function api(page, method, url, body, version) {
  return page.evaluate(
    async ([method, url, body, version]) => {
      const headers = { "Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content };
      if (version) headers["If-Match"] = `"${version}"`;
      const res = await fetch(url, { method, headers, credentials: "same-origin", body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    },
    [method, url, body, version],
  );
}

/// The public navigation's top-level labels, and each one's children, as a visitor sees them.
async function navigation(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("#site-nav > ul > li")].map((li) => ({
      title: li.querySelector(":scope > a").textContent,
      children: [...li.querySelectorAll(":scope > ul a")].map((a) => a.textContent),
    })),
  );
}

test("a menu built in the admin by dragging and with the keyboard is the site's navigation, and follows a renamed page", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  // A picture made first, with the same words: the page is offered before it.
  const picture = await api(page, "POST", "/api/rsc", { category: "image", published: true, props: { title: "Menu guide photo" } });
  assert.equal(picture.status, 201);
  const made = await api(page, "POST", "/api/rsc", { category: "article", published: true, props: { title: "Menu guide" } });
  assert.equal(made.status, 201);
  await eventually("the search finds the new page and the picture", async () =>
    (await api(page, "GET", "/api/search?text=menu+guide")).body.total === 2,
  );

  // The Menus screen lists the starter's main menu; its editor shows the items.
  await page.click('nav[aria-label="Admin"] a:has-text("Menus")');
  await page.waitForURL(env.server.url + "/admin/menus");
  await Promise.all([page.waitForURL(/\/admin\/edit\/\d+$/), page.click('main a:has-text("Main menu")')]);
  const labels = () => page.locator("#menu-tree > li > .menu-row .menu-label").allTextContents();
  assert.deepEqual(await labels(), ["Home", "Articles", "Features", "Live", "About", "Contact"]);

  // Add the page from a search; drag it to the top.
  await page.fill('#menu-add-page input[name="text"]', "menu guide");
  await page.click('#menu-add-page button[type="submit"]');
  await page.locator("#menu-candidates li").nth(1).waitFor();
  // Pages and articles first, each candidate with its category.
  assert.deepEqual(await page.locator("#menu-candidates li").allTextContents(), ["Add Menu guide article", "Add Menu guide photo image"]);
  await page.click('#menu-candidates button[aria-label="Add Menu guide (article) to the menu"]');
  assert.equal((await labels()).at(-1), "Menu guide");
  await page.locator('#menu-tree > li:has-text("Menu guide") .drag').dragTo(page.locator('#menu-tree > li:has-text("Home") > .menu-row'));
  assert.deepEqual((await labels()).slice(0, 2), ["Menu guide", "Home"], "dragged to the top");

  // Contact goes under About, by the keyboard.
  await page.locator('button[aria-label="Put Contact under the item above"]').focus();
  await page.keyboard.press("Enter");
  assert.deepEqual(await page.locator('#menu-tree > li:has-text("About") .menu-children .menu-label').allTextContents(), ["Contact"]);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Put Contact under the item above", "the focus stays on it");
  await page.click("#menu-save");
  await said(page, "#menu-status", /^Saved the menu\.$/);

  // A visitor's navigation.
  const visitor = await env.browser.newContext();
  const site = await visitor.newPage();
  await site.goto(env.server.url + "/about");
  const nav = await navigation(site);
  assert.deepEqual(nav.map((i) => i.title), ["Menu guide", "Home", "Articles", "Features", "Live", "About", "Search", "Log on"]);
  assert.deepEqual(nav.find((i) => i.title === "About").children, ["Contact"]);

  // The page is renamed: the cached navigation follows.
  const guide = (await api(page, "GET", `/api/rsc/${made.body.id}`)).body;
  const renamed = await api(page, "PATCH", `/api/rsc/${guide.id}`, { props: { title: "Guide, renamed" } }, guide.version);
  assert.equal(renamed.status, 200);
  await eventually("the navigation shows the new title", async () => {
    await site.reload();
    return (await navigation(site))[0].title === "Guide, renamed";
  });
  await visitor.close();
  await context.close();
});

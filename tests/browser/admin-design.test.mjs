// The admin's look, screen by screen, as people meet it: light and dark, on a
// wide screen and a 390 px phone. On every screen axe-core finds nothing
// serious or critical, and at 390 px nothing is wider than the screen. The
// same goes for the logon, account, sessions and error pages and the starter
// site. The editor can be worked with the keyboard alone: every control in it
// is reached by Tab, and the article is saved without the mouse.
// With BULWARK_SCREENSHOTS=1 each screen is photographed into docs/admin/look/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { accessibilityProblems, logOn as logOnAs, newArticle, said, screenshotsDir, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-design-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });
const SHOTS = screenshotsDir(join("admin", "look"));

const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

// Every screen of the admin, and the pages around it.
const ADMIN_SCREENS = [
  ["dashboard", "/admin"],
  ["resources", "/admin/resources"],
  ["new", "/admin/new"],
  ["media", "/admin/media"],
  ["categories", "/admin/categories"],
  ["predicates", "/admin/predicates"],
  ["users", "/admin/users"],
  ["rules", "/admin/rules"],
  ["settings", "/admin/settings"],
  ["cache", "/admin/cache"],
  ["modules", "/admin/modules"],
  ["backups", "/admin/backups"],
  ["menus", "/admin/menus"],
  ["redirects", "/admin/redirects"],
  ["comments", "/admin/comments"],
  ["forms", "/admin/forms"],
  ["webhooks", "/admin/webhooks"],
  ["import", "/admin/import"],
  ["account", "/logon/account"],
  ["sessions", "/logon/sessions"],
];
const PUBLIC_PAGES = [
  ["logon", "/logon"],
  ["password-reset", "/logon/reset"],
  ["not-found", "/no/such/page"],
  ["site-home", "/"],
  ["site-articles", "/articles"],
  ["site-features", "/features"],
  ["site-live", "/live"],
  ["site-about", "/about"],
  ["site-contact", "/contact"],
];

/// Opens `path` in `page` at each size, checks it, and photographs it.
async function checkScreen(page, name, path, scheme) {
  for (const [size, viewport] of [["wide", WIDE], ["phone", PHONE]]) {
    await page.setViewportSize(viewport);
    await page.goto(env.server.url + path);
    await page.waitForLoadState("load");
    const problems = await accessibilityProblems(page);
    assert.deepEqual(problems, [], `${name} (${scheme}, ${size}): axe-core finds nothing serious`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= viewport.width, `${name} (${scheme}, ${size}) is ${width} px wide on a ${viewport.width} px screen`);
    await page.screenshot({ path: join(SHOTS, `${name}-${scheme}-${size}.png`), fullPage: size === "wide" });
  }
}

for (const scheme of ["light", "dark"]) {
  test(`every admin screen, ${scheme}: accessible and no wider than a phone`, async () => {
    const context = await env.browser.newContext({ colorScheme: scheme });
    const page = await logOnAs(env.server, context, PASSWORD);
    const id = await newArticle(env.server, page, `Design check ${scheme}`);
    const menu = (await page.evaluate(() => fetch("/api/menu/main").then((r) => r.json()))).name;
    assert.equal(menu, "main");
    await page.goto(env.server.url + "/admin/menus");
    const menuEditor = await page.locator('main a:has-text("Main menu")').getAttribute("href");
    await page.goto(env.server.url + "/admin/forms");
    const formEditor = await page.locator('main td a:has-text("Contact")').getAttribute("href");
    const formId = formEditor.match(/(\d+)$/)[1];
    const screens = [
      ...ADMIN_SCREENS,
      ["editor", `/admin/edit/${id}`],
      ["translations", `/admin/translate/${id}`],
      ["menu-editor", menuEditor],
      ["form-editor", formEditor],
      ["form-answers", `/admin/forms?form=${formId}`],
    ];
    for (const [name, path] of screens) {
      await checkScreen(page, name, path, scheme);
    }
    await context.close();
  });

  test(`the logon, error and starter pages, ${scheme}: accessible and no wider than a phone`, async () => {
    const context = await env.browser.newContext({ colorScheme: scheme });
    const page = await context.newPage();
    for (const [name, path] of PUBLIC_PAGES) {
      await checkScreen(page, name, path, scheme);
    }
    // And an article, as a visitor reads it.
    await page.goto(env.server.url + "/articles");
    const article = await page.locator('main a[href*="/page/"]').first().getAttribute("href");
    await checkScreen(page, "site-article", article, scheme);
    await context.close();
  });
}

test("every admin screen and public page in Dutch: accessible and no wider than a phone", async () => {
  // Dutch words run longer than English ones: each screen again, as an
  // editor whose browser speaks Dutch sees it.
  const context = await env.browser.newContext({ locale: "nl-NL" });
  const page = await logOnAs(env.server, context, PASSWORD);
  assert.equal(await page.getAttribute("html", "lang"), "nl");
  for (const [name, path] of [...ADMIN_SCREENS, ...PUBLIC_PAGES.filter(([name]) => !name.startsWith("logon"))]) {
    await checkScreen(page, `nl-${name}`, path, "light");
  }
  await context.close();
});

test("on a phone the navigation folds behind a Menu button that opens it", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  await page.setViewportSize(PHONE);
  await page.goto(env.server.url + "/admin");
  const menu = page.locator("#nav-toggle");
  assert.equal(await page.locator("#sidenav").isVisible(), false, "folded at first");
  await menu.focus();
  await page.keyboard.press("Enter");
  assert.equal(await menu.getAttribute("aria-expanded"), "true");
  assert.equal(await page.locator('#sidenav a:has-text("Resources")').isVisible(), true, "open");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Dashboard", "focus moves into it");
  await page.keyboard.press("Escape");
  assert.equal(await page.locator("#sidenav").isVisible(), false, "Escape folds it again");
  assert.equal(await page.evaluate(() => document.activeElement.id), "nav-toggle", "and gives focus back");
  await context.close();
});

test("the editor works with the keyboard alone: every control is reached by Tab, and Save", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  const id = await newArticle(env.server, page, "Typed without a mouse");
  await page.goto(env.server.url + `/admin/edit/${id}`);
  await page.locator("#body-editor").waitFor();

  // Every control a mouse could use in the form, by a name for the message.
  const controls = await page.evaluate(() =>
    [...document.querySelectorAll("#editor input, #editor select, #editor textarea, #editor button, #editor [contenteditable=true]")]
      .filter((el) => el.offsetParent !== null && !el.disabled)
      .map((el) => el.id || el.getAttribute("aria-label") || el.textContent.trim()),
  );
  assert.ok(controls.length >= 10, `the editor has its controls (${controls.join(", ")})`);

  // Tab from the top of the page, noting where the focus goes, typing into the
  // title and the summary on the way, until the Save button has the focus.
  const reached = new Set();
  let onSave = false;
  for (let i = 0; i < 200 && !onSave; i++) {
    await page.keyboard.press("Tab");
    const here = await page.evaluate(() => {
      const el = document.activeElement;
      return { name: el.id || el.getAttribute("aria-label") || el.textContent.trim(), save: el.matches('#editor button[type="submit"]') };
    });
    reached.add(here.name);
    // (Tab selects a field's text: End keeps it.)
    if (here.name === "title") await page.keyboard.press("End").then(() => page.keyboard.type(" by keyboard"));
    if (here.name === "summary") await page.keyboard.type("Written with Tab and keys.");
    onSave = here.save;
  }
  assert.ok(onSave, "Tab reaches the Save button");
  const beforeSave = controls.slice(0, controls.indexOf("Save"));
  const missed = beforeSave.filter((c) => !reached.has(c));
  assert.deepEqual(missed, [], "every control before Save was reached by Tab");
  await page.keyboard.press("Enter");
  await said(page, "#status", /^Saved\.$/);
  const saved = await page.evaluate(
    (id) => fetch(`/api/rsc/${id}`, { credentials: "same-origin" }).then((r) => r.json()),
    id,
  );
  assert.equal(saved.props.title, "Typed without a mouse by keyboard");
  assert.equal(saved.props.summary, "Written with Tab and keys.");

  // Ctrl+S saves from anywhere on the page too.
  await page.fill("#summary", "Saved with Ctrl+S.");
  await page.locator("#title").focus();
  await page.keyboard.press("Control+s");
  await said(page, "#status", /^Saved\.$/);
  await context.close();
});

test("a logged-on editor finds 'Edit this page' on a public page, which stays one cacheable page for everyone", async () => {
  // Anonymous: no link, and a page any cache may keep.
  const visitor = await env.browser.newContext();
  const anonymous = await visitor.newPage();
  await anonymous.goto(env.server.url + "/articles");
  const article = await anonymous.locator('main a[href*="/page/"]').first().getAttribute("href");
  const seen = await anonymous.goto(env.server.url + article);
  const cacheControl = seen.headers()["cache-control"] ?? "";
  assert.doesNotMatch(cacheControl, /private|no-store/, `a shared cache may keep it: ${cacheControl}`);
  assert.equal(await anonymous.locator(".edit-link").count(), 0, "no Edit link for a visitor");
  const html = await seen.text();
  await visitor.close();

  // The editor: the same page, and the link to its editor.
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  await page.goto(env.server.url + article);
  const edit = page.locator("a.edit-link");
  assert.equal(await edit.textContent(), "Edit this page");
  const id = await page.evaluate(() => document.body.dataset.resource);
  assert.match(html, new RegExp(`<body data-resource="${id}">`), "the visitor's page names the resource too");
  await Promise.all([page.waitForURL(env.server.url + `/admin/edit/${id}`), edit.click()]);
  assert.match(await page.locator("h1").textContent(), /^Edit: /);

  // Logged off, the hint is gone with the session.
  await page.goto(env.server.url + "/logoff");
  await page.click('main button[type="submit"]');
  await page.goto(env.server.url + article);
  assert.equal(await page.locator(".edit-link").count(), 0, "no link after logging off");
  await context.close();
});

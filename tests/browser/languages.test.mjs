// Languages in a real browser, on the starter site (English and Dutch): a
// visitor switches language on an article and lands on the same article; an
// editor translates it side by side in the admin (the missing Dutch text is
// flagged, English starts it, both are saved, and what was typed survives a
// reload before saving); the translations screen is axe-core clean at 390 px;
// an editor whose browser speaks Dutch gets the admin and its scripts in Dutch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { accessibilityProblems, eventually, logOn, newArticle, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-languages-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

test("the language switch keeps a visitor on the same article", async () => {
  const page = await (await env.browser.newContext({ locale: "en-GB" })).newPage();
  await page.goto(env.server.url + "/");
  assert.equal(new URL(page.url()).pathname, "/en/", "/ sends an English browser to /en/");
  await page.goto(env.server.url + "/en/articles");
  const href = await page.locator('main a[href*="/page/"]').first().getAttribute("href");
  await page.goto(env.server.url + href);
  const id = href.match(/\/page\/(\d+)/)[1];
  const title = await page.locator("article h1").textContent();
  assert.equal(await page.getAttribute("html", "lang"), "en");

  await Promise.all([page.waitForURL(/\/nl\/page\//), page.click('nav.languages a[hreflang="nl"]')]);
  assert.match(page.url(), new RegExp(`/nl/page/${id}/`), "the same article, in Dutch");
  assert.equal(await page.getAttribute("html", "lang"), "nl");
  // Not translated yet: its text falls back to English; the site's texts are Dutch.
  assert.equal(await page.locator("article h1").textContent(), title);
  assert.equal(await page.locator('#site-nav a[href="/nl/articles"]').textContent(), "Artikelen");
  assert.equal(await page.locator('nav.languages a[aria-current="true"]').getAttribute("hreflang"), "nl");
  assert.equal(await page.locator('link[rel="canonical"]').count(), 1);
  assert.equal(await page.locator('link[rel="alternate"][hreflang]').count(), 3, "en, nl and x-default");

  await Promise.all([page.waitForURL(/\/en\/page\//), page.click('nav.languages a[hreflang="en"]')]);
  assert.match(page.url(), new RegExp(`/en/page/${id}/`));
});

test("an editor translates an article side by side; nothing typed is lost", async () => {
  const context = await env.browser.newContext({ locale: "en-GB" });
  const page = await logOn(env.server, context, PASSWORD);
  const id = await newArticle(env.server, page, "Cycling to work");
  await page.fill("#summary", "Why the bicycle wins.");
  await page.check("#published");
  await page.click('#editor button[type="submit"]');
  await said(page, "#editor #status", /Saved/);

  await page.click("#translations-link");
  await page.waitForURL(new RegExp(`/admin/translate/${id}$`));
  // The Dutch texts are missing, and said to be.
  assert.equal(await page.inputValue("#title-en"), "Cycling to work");
  assert.equal(await page.inputValue("#title-nl"), "");
  assert.equal(await page.locator("#title-nl-missing").isVisible(), true);
  assert.equal(await page.locator("#title-en-missing").isVisible(), false);
  await said(page, "#missing-summary", /Nederlands/);

  // English starts Dutch; a Dutch title is typed over it.
  await page.selectOption("#copy-nl", "en");
  await page.click('button[data-copy="nl"]');
  assert.equal(await page.inputValue("#summary-nl"), "Why the bicycle wins.");
  await page.fill("#title-nl", "Fietsen naar het werk");
  await page.fill("#summary-nl", "Waarom de fiets wint.");
  assert.equal(await page.locator("#title-nl-missing").isVisible(), false);

  // Gone before saving (a reload): the typed text is back.
  page.on("dialog", (d) => d.accept());
  await page.reload();
  assert.equal(await page.inputValue("#title-nl"), "Fietsen naar het werk");
  await said(page, "#restored", /is back in its fields/);

  await page.click('#translations button[type="submit"]');
  await said(page, "#status", /Saved in every language/);
  const stored = await page.evaluate(async (id) => (await (await fetch(`/api/rsc/${id}`)).json()).props, id);
  assert.deepEqual(stored.title, { trans: { en: "Cycling to work", nl: "Fietsen naar het werk" } });
  assert.deepEqual(stored.summary, { trans: { en: "Why the bicycle wins.", nl: "Waarom de fiets wint." } });

  // Published in English only, then in both again.
  const languagesOf = () => page.evaluate(async (id) => (await (await fetch(`/api/rsc/${id}`)).json()).props.languages, id);
  await page.uncheck('input[name="published-in"][value="nl"]');
  await page.click('#translations button[type="submit"]');
  await eventually("published in English only", async () => JSON.stringify(await languagesOf()) === '["en"]');
  await page.check('input[name="published-in"][value="nl"]');
  await page.click('#translations button[type="submit"]');
  await eventually("published in every language: no list", async () => (await languagesOf()) === undefined);

  // The main editor changes the admin's language only; Dutch stays.
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  await page.fill("#title", "Cycling to the office");
  await page.click('#editor button[type="submit"]');
  await said(page, "#editor #status", /Saved/);
  const after = await page.evaluate(async (id) => (await (await fetch(`/api/rsc/${id}`)).json()).props.title, id);
  assert.deepEqual(after, { trans: { en: "Cycling to the office", nl: "Fietsen naar het werk" } });

  // The public page in Dutch shows the Dutch title.
  const visitor = await (await env.browser.newContext()).newPage();
  await eventually("the Dutch page shows the Dutch title", async () => {
    await visitor.goto(`${env.server.url}/nl/page/${id}`);
    return (await visitor.locator("article h1").textContent()) === "Fietsen naar het werk";
  });

  // The screen on a phone: accessible, nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${env.server.url}/admin/translate/${id}`);
  assert.deepEqual(await accessibilityProblems(page), []);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
});

test("an editor whose browser speaks Dutch gets the admin in Dutch, what its scripts say too", async () => {
  const context = await env.browser.newContext({ locale: "nl-NL" });
  const page = await logOn(env.server, context, PASSWORD);
  assert.equal(await page.getAttribute("html", "lang"), "nl");
  assert.equal(await page.locator("#sidenav").getByRole("link", { name: "Overzicht" }).count(), 1);
  const id = await newArticle(env.server, page, "Fietsen in de regen");
  // A text of the editor's script, from the admin's catalog.
  await page.click('#editor button[type="submit"]');
  await said(page, "#editor #status", /^Opgeslagen/);
  // The public page's edit link (a script of its own) speaks Dutch too.
  await page.goto(`${env.server.url}/nl/page/${id}`);
  assert.equal(await page.locator("a.edit-link").textContent(), "Deze pagina bewerken");
  // The Dutch editor on a phone is accessible and fits.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  assert.deepEqual(await accessibilityProblems(page), []);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
});

// Redirects in a real browser: the administrator adds one on the Redirects
// screen and the old address answers 301 to the new one, its hit counted on
// the screen; a CSV file with a wrong line is refused whole, naming the line;
// an article whose slug changes keeps its old address working (301).
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, logOn as logOnAs, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-redirects-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

/// The first answer to `path`, redirects not followed.
async function answer(path) {
  const res = await fetch(env.server.url + path, { redirect: "manual" });
  return { status: res.status, location: res.headers.get("location") };
}

test("a redirect made in the admin answers 301 and counts its hits; a wrong CSV line is named; an old slug moves", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  await page.click('nav[aria-label="Admin"] a:has-text("Redirects")');
  await page.waitForURL(env.server.url + "/admin/redirects");
  await said(page, "#redirects-empty", /No redirects yet/);

  assert.equal((await answer("/2019/old-news/")).status, 404);
  await page.fill('#new-redirect input[name="from"]', "/2019/old-news/");
  await page.fill('#new-redirect input[name="to"]', "/articles");
  await page.click('#new-redirect button[type="submit"]');
  await said(page, "#redirects-status", /Added: \/2019\/old-news now answers 301/);
  assert.deepEqual(await answer("/2019/old-news/"), { status: 301, location: "/articles" });
  await eventually("the hit shows on the screen", async () => {
    await page.reload();
    return (await page.locator('#redirects tr:has-text("/2019/old-news") td[data-label="Hits"]').textContent()) === "1";
  });

  // A CSV file with a wrong line: nothing is imported, the line is named.
  await page.setInputFiles('#import-redirects input[type="file"]', {
    name: "old.csv", mimeType: "text/csv", buffer: Buffer.from("from,to,status\n/a,/about,301\nnot-a-path,/x,301\n"),
  });
  await page.click('#import-redirects button[type="submit"]');
  await said(page, "#redirects-status", /Not imported: nothing was imported: line 3:/);
  assert.equal((await answer("/a")).status, 404);

  // An article's slug changes: its old address moves to the new one.
  // (The first article a visitor sees: the list as anonymous visitors get it.)
  const list = await (await fetch(env.server.url + "/articles")).text();
  // The starter puts the language in its URLs: `/en/page/{id}/{slug}`.
  const old = list.match(/href="((?:\/[a-z]{2})?\/page\/\d+\/[^"]+)"/)[1];
  const id = Number(old.match(/\/page\/(\d+)/)[1]);
  const article = await page.evaluate(async (id) => (await fetch(`/api/rsc/${id}`)).json(), id);
  const changed = await page.evaluate(async ([id, version]) => {
    const res = await fetch(`/api/rsc/${id}`, {
      method: "PATCH",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "If-Match": `"${version}"`, "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content },
      body: JSON.stringify({ props: { slug: "a-new-address" } }),
    });
    return res.status;
  }, [article.id, article.version]);
  assert.equal(changed, 200);
  assert.deepEqual(await answer(old), { status: 301, location: `/en/page/${article.id}/a-new-address` });
  await context.close();
});

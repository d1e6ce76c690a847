// An article page of the starter site updates by itself when the resource changes
// through the JSON API: the store's change event flushes the caches and publishes
// on rsc/{id}, and the page's live element re-fetches itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { serverAndBrowser } from "./helpers.mjs";

const env = serverAndBrowser();

function apiToken() {
  const toml = readFileSync(join(env.server.dir, "sites/default/site.toml"), "utf8");
  return toml.match(/^token = "([0-9a-f]+)"/m)[1];
}

test("an article page shows a change made through the API without a reload", async () => {
  const page = await env.browser.newPage();
  await page.goto(env.server.url + "/");
  const href = await page.getAttribute('.card a[href*="/page/"]', "href");
  const id = href.match(/\/page\/(\d+)/)[1];
  await page.goto(env.server.url + href);
  const before = await page.textContent("article h1");
  // Mark the document: a reload would lose the mark.
  await page.evaluate(() => (window.notReloaded = true));
  await page.waitForFunction(() => window.Bulwark && document.querySelector("[data-live]"));
  await page.waitForTimeout(300); // let the subscription settle

  const title = `Changed live ${Date.now()}`;
  const res = await fetch(`${env.server.url}/api/rsc/${id}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${apiToken()}`, "Content-Type": "application/json" },
    body: JSON.stringify({ props: { title } }),
  });
  assert.equal(res.status, 200, await res.text());

  await page.waitForFunction((t) => document.querySelector("article h1").textContent === t, title, {
    timeout: 10000,
  });
  assert.notEqual(before, title);
  assert.equal(await page.evaluate(() => window.notReloaded), true);
  await page.close();
});

test("the API refuses changes without the token", async () => {
  const res = await fetch(`${env.server.url}/api/rsc/1`, {
    method: "PATCH",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ props: { title: "nope" } }),
  });
  assert.equal(res.status, 401);
});

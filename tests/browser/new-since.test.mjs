// Seed 002's trick in a real browser: /articles is one page for everybody
// (byte for byte), and a small script marks what is new since the visitor's
// last visit: nothing on a first visit, the article published in between on
// the next one, and nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, logOn as logOnAs, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-new-since-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

const marked = (page) => page.locator(".card.is-new :is(h2, h3)").allTextContents();

test("what is new since the last visit is marked in the browser, on a page that is the same for everyone", async () => {
  const visitor = await env.browser.newContext();
  const first = await visitor.newPage();
  await first.goto(env.server.url + "/articles");
  assert.ok((await first.locator(".card").count()) > 3, "the articles are listed");
  assert.deepEqual(await marked(first), [], "a first visit marks nothing");
  await first.reload();
  assert.deepEqual(await marked(first), [], "nor does a second page of the same visit");
  await first.close();

  // Meanwhile an article is published.
  const admin = await env.browser.newContext();
  const page = await logOnAs(env.server, admin, PASSWORD);
  const made = await page.evaluate(async () => {
    const res = await fetch("/api/rsc", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content },
      body: JSON.stringify({ category: "article", published: true, props: { title: "Fresh from the press", summary: "Published between two visits." } }),
    });
    return res.status;
  });
  assert.equal(made, 201);
  await admin.close();

  // Two visitors get the same bytes (once the cached page was made again:
  // until then, within its grace, the earlier one).
  const articles = () => fetch(env.server.url + "/articles").then((r) => r.text());
  const a = await eventually("the list shows the new article", async () => {
    const page = await articles();
    return /Fresh from the press/.test(page) && page;
  });
  assert.equal(await articles(), a, "one page for everybody");

  // The next visit (a new tab): the new article is marked, and only it.
  const second = await visitor.newPage();
  await second.goto(env.server.url + "/articles");
  assert.deepEqual(await marked(second), ["Fresh from the press"]);
  assert.equal(await second.locator(".card.is-new .new-mark").textContent(), "New");
  await visitor.close();
});

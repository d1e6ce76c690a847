// A feed reader's way in: the front page names the site's feeds in its
// <head> (autodiscovery), in the visitor's language, and what they name is a
// feed of the articles the site lists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { serverAndBrowser } from "./helpers.mjs";

const env = serverAndBrowser({});

test("the front page names its Atom and RSS feeds, and they list the site's articles", async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  for (const language of ["en", "nl"]) {
    await page.goto(`${env.server.url}/${language}/`);
    const feeds = await page.evaluate(() =>
      [...document.querySelectorAll('head link[rel="alternate"][type$="+xml"]')].map((l) => ({ type: l.type, href: l.href, title: l.title })),
    );
    assert.deepEqual(
      feeds.map((f) => [f.type, new URL(f.href).pathname]),
      [
        ["application/atom+xml", `/${language}/feed`],
        ["application/rss+xml", `/${language}/feed/rss`],
      ],
      `${language}: the site's two feeds`,
    );
    await page.goto(`${env.server.url}/${language}/articles`);
    const newest = (await page.locator("main .card h2").first().innerText()).trim();
    for (const feed of feeds) {
      const answer = await page.request.get(feed.href);
      assert.equal(answer.status(), 200, feed.href);
      assert.equal(answer.headers()["content-type"], `${feed.type}; charset=utf-8`, feed.href);
      const xml = await answer.text();
      const first = feed.type === "application/atom+xml" ? /<entry>\s*<title type="text">([^<]*)</.exec(xml) : /<item>\s*<title>([^<]*)</.exec(xml);
      assert.equal(first?.[1], newest, `${feed.href}: the newest article first`);
    }
  }
  await context.close();
});

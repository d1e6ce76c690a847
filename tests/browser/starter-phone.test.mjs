// The starter site on a phone: its navigation is folded behind "Menu" from
// the first paint (before any script runs, so nothing below it moves when
// scripts arrive: Lighthouse counted a layout shift of 0.37 on an article
// when a script folded it), opens and closes as a button with scripts, and
// opens as a link to it without them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { serverAndBrowser } from "./helpers.mjs";

const env = serverAndBrowser({});

test("on a phone the navigation is folded from the first paint and opens with or without scripts", async () => {
  for (const javaScriptEnabled of [true, false]) {
    const context = await env.browser.newContext({ javaScriptEnabled, viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    // Scripts held back: what the first paint shows.
    if (javaScriptEnabled) await page.route("**/lib/**/*.js", (route) => setTimeout(() => route.continue(), 500));
    await page.goto(env.server.url + "/en/articles", { waitUntil: "commit" });
    await page.locator(".nav-toggle").waitFor();
    // The first paint waits for the style sheets, not for the scripts.
    await page.waitForFunction(() => [...document.styleSheets].some((s) => /site/.test(s.href || "")));
    const folded = () => page.evaluate(() => getComputedStyle(document.getElementById("site-nav")).display === "none");
    assert.equal(await folded(), true, `folded before scripts (scripts ${javaScriptEnabled ? "on" : "off"})`);
    const mainTop = await page.evaluate(() => document.querySelector("main").getBoundingClientRect().top);
    await page.waitForLoadState("load");
    assert.equal(await page.evaluate(() => document.querySelector("main").getBoundingClientRect().top), mainTop, "nothing moved");
    await page.click(".nav-toggle");
    await page.locator('#site-nav a[href="/en/articles"]').waitFor({ state: "visible" });
    if (javaScriptEnabled) {
      assert.equal(await page.getAttribute(".nav-toggle", "aria-expanded"), "true");
      await page.keyboard.press("Space");
      assert.equal(await folded(), true, "Space closes it again (a button)");
    }
    await context.close();
  }
});

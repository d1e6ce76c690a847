// The starter site under its default Content-Security-Policy: every page, the live
// board and a live article page load, run their scripts and connect for push
// without a single policy violation (no inline script or style slipped in).
import { test } from "node:test";
import assert from "node:assert/strict";
import { serverAndBrowser } from "./helpers.mjs";

const env = serverAndBrowser();

/// A page that records every CSP violation the browser reports, from the first
/// byte of every document it loads.
async function watchedPage() {
  const page = await env.browser.newPage();
  const violations = [];
  await page.exposeFunction("reportViolation", (v) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      window.reportViolation(`${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy/i.test(msg.text())) violations.push(msg.text());
  });
  return { page, violations };
}

test("the starter pages raise no Content-Security-Policy violation", async () => {
  const { page, violations } = await watchedPage();
  const first = await page.goto(env.server.url + "/");
  assert.match(first.headers()["content-security-policy"], /script-src 'self'/);
  const article = await page.getAttribute('.card a[href*="/page/"]', "href");
  for (const path of ["/", "/about", "/features", "/articles", "/articles?page=abc", "/contact", article, "/no-such-page"]) {
    await page.goto(env.server.url + path);
    await page.waitForLoadState("networkidle");
  }
  // The live board: its scripts run and push connects, over every transport.
  for (const transport of ["websocket", "sse", "poll"]) {
    await page.goto(`${env.server.url}/live?transport=${transport}`);
    await page.waitForSelector('#push-state[data-state="connected"]', { timeout: 10000 });
    const text = `csp check over ${transport} ${Date.now()}`;
    await page.fill('input[name="text"]', text);
    await page.click('button[type="submit"]');
    await page.waitForSelector(`#board li:text-is("${text}")`, { timeout: 10000 });
  }
  await page.waitForTimeout(300);
  assert.deepEqual(violations, []);
  await page.close();
});

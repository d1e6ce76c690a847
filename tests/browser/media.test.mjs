// Media in a real browser, as the administrator: files dropped on the media
// library (and chosen with the file picker) upload with their progress and
// appear in the grid; a file the site does not take is refused with the
// server's reason; an article gets a picture from the library and its public
// page shows the preview. Screenshots for docs/media.md (docs/media/*.png).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { logOn as logOnAs, pictureBytes, screenshotsDir, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const SHOTS = screenshotsDir("media");
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function logOn(context) {
  return logOnAs(env.server, context, PASSWORD);
}

test("files dropped on the library upload with progress and appear; a wrong one says why", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  assert.ok(await page.locator('nav[aria-label="Admin"] a[href="/admin/media"]').count(), "Media is in the menu");
  await page.goto(env.server.url + "/admin/media");

  // Dropped: a real drop event carrying a File.
  const dropped = (await pictureBytes(page, 20)).toString("base64");
  await page.evaluate((b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], "sunset.jpg", { type: "image/jpeg" }));
    const zone = document.getElementById("dropzone");
    zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
  }, dropped);
  const first = page.locator("#uploads li").first();
  await first.locator(".message.ok").waitFor({ timeout: 15000 });
  assert.equal(await first.locator("progress").evaluate((p) => p.value), 1);
  // Shown once its preview has loaded (under load that is a moment later).
  await page.waitForFunction(() => {
    const img = document.querySelector('#media-grid img[alt="sunset.jpg"]');
    return img && img.complete && img.naturalWidth > 0;
  }, null, { timeout: 15000 });
  assert.equal(await page.locator('#media-grid img[alt="sunset.jpg"]').evaluate((img) => img.naturalWidth), 1200);

  // Chosen with the picker, and a page that is not a picture at all.
  await page.setInputFiles("#files", [
    { name: "forest.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 140) },
    { name: "notes.jpg", mimeType: "image/jpeg", buffer: Buffer.from("<!doctype html><script>alert(1)</script>") },
  ]);
  const refused = page.locator("#uploads li", { hasText: "notes.jpg" }).locator(".message.error");
  await refused.waitFor({ timeout: 15000 });
  assert.match(await refused.textContent(), /not uploaded: notes\.jpg \(its content is .*\) cannot be uploaded here: only pictures \(JPEG, PNG, GIF, WebP\), PDF documents/);
  await page.locator("#uploads li", { hasText: "forest.jpg" }).locator(".message.ok").waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(SHOTS, "library.png") });

  // Loaded again: the library shows both, as previews.
  await page.reload();
  for (const name of ["sunset.jpg", "forest.jpg"]) {
    const img = page.locator("#media-grid li", { hasText: name }).locator("img");
    assert.match(await img.getAttribute("src"), /^\/media\/preview\/\d+\/thumbnail\//);
    await page.waitForFunction((el) => el.complete && el.naturalWidth === 200, await img.elementHandle());
  }
  await context.close();
});

test("an article gets a picture from the library and its page shows it", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  const title = `Pictured ${Date.now()}`;
  await page.goto(env.server.url + "/admin/new");
  await page.selectOption('#new-resource select[name="category"]', "article");
  await page.fill('#new-resource input[name="title"]', title);
  await Promise.all([page.waitForURL(/\/admin\/edit\/\d+$/), page.click('#new-resource button[type="submit"]')]);

  // Uploaded from the editor itself, and made the article's picture.
  await page.setInputFiles("#depiction-file", {
    name: "harbour.jpg",
    mimeType: "image/jpeg",
    buffer: await pictureBytes(page, 220),
  });
  await page.locator("#depiction .current-picture img").waitFor({ timeout: 15000 });
  // Another one from the library replaces it.
  await page.click("#depiction summary");
  const other = page.locator('#depiction button[data-pick]').last();
  const otherId = await other.getAttribute("data-pick");
  await other.click();
  await page.waitForFunction(() => /^The picture is saved\.$/.test(document.querySelector("#depiction-status").textContent), null, { timeout: 15000 });
  const current = page.locator("#depiction .current-picture img");
  assert.equal(await current.count(), 1, "one picture");
  assert.match(await current.getAttribute("src"), new RegExp(`^/media/preview/${otherId}/thumbnail/`));
  await page.locator("#depiction").screenshot({ path: join(SHOTS, "picture.png") });

  await page.check("#published");
  await page.click('#editor button[type="submit"]');
  await page.waitForFunction(() => /^Saved\.$/.test(document.querySelector("#status").textContent), null, { timeout: 15000 });
  const href = await page.locator("#page-link").getAttribute("href");

  // The public page, to an anonymous visitor: the preview, loaded.
  const visitor = await env.browser.newContext();
  const pub = await visitor.newPage();
  await pub.goto(env.server.url + href);
  const pic = pub.locator("figure.depiction img");
  assert.match(await pic.getAttribute("src"), new RegExp(`^/media/preview/${otherId}/medium/`));
  assert.match((await pic.getAttribute("srcset")) || "", /medium@2x/);
  await pic.scrollIntoViewIfNeeded();
  await pub.waitForFunction((el) => el.complete && el.naturalWidth > 0, await pic.elementHandle());
  assert.equal(await pic.evaluate((el) => el.naturalWidth >= 800), true);
  await visitor.close();
  await context.close();
});

test("an image's focal point, clicked in its editor, moves its crops", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(context);
  await page.goto(env.server.url + "/admin/media");
  await page.setInputFiles("#files", { name: "wide.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 300) });
  const link = page.locator("#media-grid li", { hasText: "wide.jpg" }).locator("a");
  await link.waitFor({ timeout: 15000 });
  await Promise.all([page.waitForURL(/\/admin\/edit\/\d+$/), link.click()]);
  const thumb = page.locator("#focus img").last();
  const before = await thumb.getAttribute("src");
  // A click near the right edge, halfway down.
  const image = page.locator("#focus-image");
  await image.scrollIntoViewIfNeeded();
  const box = await image.boundingBox();
  await image.click({ position: { x: box.width * 0.9, y: box.height * 0.5 } });
  await page.waitForFunction(() => /^Saved/.test(document.querySelector("#focus-status").textContent), null, { timeout: 15000 });
  // (The click lands on a whole pixel: within half a per cent of where it was aimed.)
  const [fx, fy] = [Number(await page.inputValue("#focus-x")), Number(await page.inputValue("#focus-y"))];
  assert.ok(Math.abs(fx - 90) <= 0.5, `the focal point is 90% from the left: ${fx}`);
  assert.ok(Math.abs(fy - 50) <= 0.5, `the focal point is halfway down: ${fy}`);
  const after = await page.locator("#focus img").last().getAttribute("src");
  assert.notEqual(after, before, "a new focal point is a new preview URL");
  await page.waitForFunction((el) => el.complete && el.naturalWidth === 200, await page.locator("#focus img").last().elementHandle());
  await page.locator("#focus").screenshot({ path: join(SHOTS, "focus.png") });
  await context.close();
});

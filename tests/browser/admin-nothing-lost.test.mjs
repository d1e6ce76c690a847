// Nothing an editor types is lost, in a real browser: a picture uploaded and
// chosen in the editor and a focal point set leave the page (and the form's
// unsaved text) where they were; a closed tab's unsaved text is offered back
// when the editor opens again, and leaving with unsaved text asks first; a
// save that crosses another editor's shows both versions and lets the editor
// choose.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, logOn, pictureBytes, newArticle as newArticleIn, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-admin-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function newArticle(page, title) {
  return newArticleIn(env.server, page, title);
}

// The editor's draft of the resource on the server, or null.
function draft(page, id) {
  return page.evaluate((id) => fetch(`/api/rsc/${id}/draft`).then((r) => (r.ok ? r.json() : null)), id);
}

// The resource as the API has it now, read with the page's session.
function stored(page, id) {
  return page.evaluate((id) => fetch("/api/rsc/" + id).then((r) => r.json()), id);
}

test("a picture uploaded and chosen, and a focal point set, keep what the form holds", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(env.server, context, PASSWORD);
  const id = await newArticle(page, `Kept ${Date.now()}`);
  await page.fill("#summary", "A summary not saved yet");
  await page.locator("#body-editor").click();
  await page.keyboard.type("Body words not saved yet.");
  // Gone if the page reloads.
  await page.evaluate(() => { window.stillTheSamePage = true; });

  await page.setInputFiles("#depiction-file", { name: "bay.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 40) });
  await said(page, "#depiction-status", /^The picture is saved\.$/);
  await page.click("#depiction summary");
  const other = page.locator("#depiction button[data-pick]").last();
  const otherId = await other.getAttribute("data-pick");
  await other.click();
  await said(page, "#depiction-status", /^The picture is saved\.$/);
  assert.match(
    await page.locator("#depiction .current-picture img").getAttribute("src"),
    new RegExp(`^/media/preview/${otherId}/thumbnail/`),
    "the chosen picture is shown",
  );
  assert.equal(await page.evaluate(() => window.stillTheSamePage), true, "the page was not reloaded");
  assert.equal(await page.inputValue("#summary"), "A summary not saved yet");
  assert.match(await page.locator("#body-editor").textContent(), /Body words not saved yet\./);
  await page.click('#editor button[type="submit"]');
  await said(page, "#status", /^Saved\.$/);
  assert.equal((await stored(page, id)).props.summary, "A summary not saved yet");

  // The picture's own editor: a new title typed, then the focal point clicked.
  await page.goto(env.server.url + "/admin/edit/" + otherId);
  await page.evaluate(() => { window.stillTheSamePage = true; });
  await page.fill("#title", "A bay, renamed");
  const before = await page.locator("#focus-preview img").getAttribute("src");
  const image = page.locator("#focus-image");
  await image.scrollIntoViewIfNeeded();
  const box = await image.boundingBox();
  await image.click({ position: { x: box.width * 0.25, y: box.height * 0.75 } });
  await said(page, "#focus-status", /^Saved/);
  assert.notEqual(await page.locator("#focus-preview img").getAttribute("src"), before, "the crop follows the focal point");
  assert.equal(await page.evaluate(() => window.stillTheSamePage), true, "the page was not reloaded");
  assert.equal(await page.inputValue("#title"), "A bay, renamed");
  // Saved against the version the focal point made: no conflict with itself.
  await page.click('#editor button[type="submit"]');
  await said(page, "#status", /^Saved\.$/);
  const picture = await stored(page, Number(otherId));
  assert.equal(picture.props.title, "A bay, renamed");
  assert.ok(Math.abs(picture.props.focus_x - 0.25) < 0.01, `focus_x ${picture.props.focus_x}`);
  await context.close();
});

test("leaving with unsaved text asks first, and a closed tab's text is offered back", async () => {
  const context = await env.browser.newContext();
  const page = await logOn(env.server, context, PASSWORD);
  const id = await newArticle(page, `Draft ${Date.now()}`);
  const editorUrl = page.url();
  await page.click("#summary");
  await page.keyboard.type("Typed, then the tab was closed");
  await page.waitForFunction(
    (key) => (localStorage.getItem(key) || "").includes("Typed, then the tab was closed"),
    `bulwark.draft.${new URL(env.server.url).host}.${id}`,
    { timeout: 15000 },
  );
  const asked = new Promise((resolve) => page.once("dialog", (dialog) => {
    resolve(dialog.type());
    dialog.accept();
  }));
  const closed = new Promise((resolve) => page.once("close", resolve));
  await page.close({ runBeforeUnload: true });
  assert.equal(await asked, "beforeunload", "leaving with unsaved text asks first");
  await closed;

  const again = await context.newPage();
  await again.goto(editorUrl);
  await again.locator("#draft").waitFor({ state: "visible", timeout: 15000 });
  assert.match(await again.locator("#draft-title").textContent(), /^You have changes here that were not saved/);
  assert.equal(await again.inputValue("#summary"), "", "offered, not put in unasked");
  await again.click("#draft-restore");
  assert.equal(await again.inputValue("#summary"), "Typed, then the tab was closed");
  await again.click('#editor button[type="submit"]');
  await said(again, "#status", /^Saved\.$/);
  assert.equal((await stored(again, id)).props.summary, "Typed, then the tab was closed");
  // Saved: nothing is offered any more.
  await again.reload();
  await again.locator("#editor").waitFor();
  assert.equal(await again.locator("#draft").isHidden(), true, "no draft after the save");
  await context.close();
});

test("a save that crosses another editor's shows both versions, and the editor chooses", async () => {
  const first = await env.browser.newContext();
  const second = await env.browser.newContext();
  const a = await logOn(env.server, first, PASSWORD);
  const id = await newArticle(a, `Shared ${Date.now()}`);
  const b = await logOn(env.server, second, PASSWORD);
  await b.goto(a.url());

  await a.fill("#title", "The title as A saved it");
  await a.click('#editor button[type="submit"]');
  await said(a, "#status", /^Saved\.$/);

  await b.fill("#title", "The title as B wrote it");
  await b.fill("#summary", "The summary B wrote");
  await b.click('#editor button[type="submit"]');
  await b.locator("#conflict").waitFor({ state: "visible", timeout: 15000 });
  assert.match(await b.locator("#conflict-diff del").allTextContents().then((t) => t.join(" ")), /A saved/);
  assert.match(await b.locator("#conflict-diff ins").allTextContents().then((t) => t.join(" ")), /B wrote/);
  assert.equal(await b.inputValue("#summary"), "The summary B wrote", "nothing B typed is lost");
  assert.equal((await stored(b, id)).props.title, "The title as A saved it", "not saved over A's unasked");

  await b.click("#conflict-mine");
  await said(b, "#status", /^Saved\.$/);
  const now = await stored(b, id);
  assert.equal(now.props.title, "The title as B wrote it");
  assert.equal(now.props.summary, "The summary B wrote");
  await first.close();
  await second.close();
});

test("two editors on one resource are told of each other, of a save, and of leaving", async () => {
  const first = await env.browser.newContext();
  const second = await env.browser.newContext();
  const a = await logOn(env.server, first, PASSWORD);
  await newArticle(a, `Together ${Date.now()}`);
  const b = await logOn(env.server, second, PASSWORD);
  await b.goto(a.url());
  // Each hears of the other (the one already there, too).
  await said(a, "#others", /has this open in the editor too/);
  await said(b, "#others", /has this open in the editor too/);

  await b.fill("#summary", "Saved by the second");
  await b.click('#editor button[type="submit"]');
  await said(b, "#status", /^Saved\.$/);
  const version = await b.locator("#editor").getAttribute("data-version");
  await said(a, "#others", new RegExp(`saved version ${version} at .*you will see their version and yours first`));

  await b.close();
  await said(a, "#others", /^(?!.*has this open)/);
  await first.close();
  await second.close();
});

test("what an editor typed is kept on the server and offered in another browser", async () => {
  const laptop = await env.browser.newContext();
  const page = await logOn(env.server, laptop, PASSWORD);
  const id = await newArticle(page, `Two devices ${Date.now()}`);
  await page.click("#summary");
  await page.keyboard.type("Begun on the laptop");
  // Kept on the server as it is typed (not saved, not published).
  await eventually("the draft is kept on the server", () => draft(page, id).then((d) => d?.fields.summary === "Begun on the laptop"));
  assert.equal((await stored(page, id)).props.summary ?? "", "", "a draft is not a save");

  // Another browser, nothing in its own storage: the server's copy is offered.
  const phone = await env.browser.newContext();
  const other = await logOn(env.server, phone, PASSWORD);
  await other.goto(page.url());
  await other.locator("#draft").waitFor({ state: "visible", timeout: 15000 });
  await other.click("#draft-restore");
  assert.equal(await other.inputValue("#summary"), "Begun on the laptop");
  await other.click('#editor button[type="submit"]');
  await said(other, "#status", /^Saved\.$/);
  // Saved: the working copy is gone.
  await eventually("the draft is gone after the save", () => draft(other, id).then((d) => d === null));
  await laptop.close();
  await phone.close();
});

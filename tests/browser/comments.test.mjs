// Comments in a real browser: a visitor comments on an article (anonymous,
// a first-time writer: the comment waits), a moderator approves it on the
// admin's Comments screen, and another visitor's open copy of the article
// shows it without a reload (push). Then a reply by the Reply button.
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, logOn as logOnAs, said, serverAndBrowser } from "./helpers.mjs";

const PASSWORD = "browser-test-comments-password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

/// The texts of the comments an open page shows.
function shownComments(page) {
  return page.locator("#comments .comment-body").allTextContents();
}

test("a visitor's comment waits, is approved in the admin, and appears on another open page", async () => {
  const writerContext = await env.browser.newContext();
  const writer = await writerContext.newPage();
  await writer.goto(env.server.url + "/articles");
  const article = await writer.locator('main a[href*="/page/"]').first().getAttribute("href");
  await writer.goto(env.server.url + article);

  // Another visitor has the article open; it must not reload.
  const readerContext = await env.browser.newContext();
  const reader = await readerContext.newPage();
  await reader.goto(env.server.url + article);
  await reader.evaluate(() => { window.notReloaded = true; });
  assert.deepEqual(await shownComments(reader), []);

  // The visitor writes (a first-time writer: the comment waits).
  const form = writer.locator("form[data-comment-form]");
  await form.locator('input[name="name"]').fill("Eve Visitor");
  await form.locator('input[name="email"]').fill("eve@example.org");
  await form.locator('textarea[name="body"]').fill("What a clear explanation.\n\nThank you!");
  await form.locator('button[type="submit"]').click();
  await said(writer, "#comments .comment-status", /will appear once a moderator has read it/);
  assert.equal(await form.locator('textarea[name="body"]').inputValue(), "", "the form is ready for the next");
  assert.deepEqual(await shownComments(writer), [], "not shown before it is approved");

  // The moderator approves it on the Comments screen.
  const adminContext = await env.browser.newContext();
  const admin = await logOnAs(env.server, adminContext, PASSWORD);
  await admin.click('nav[aria-label="Admin"] a:has-text("Comments")');
  await admin.waitForURL(env.server.url + "/admin/comments");
  const row = admin.locator('#comments-list tbody tr:has-text("What a clear explanation.")');
  await row.waitFor();
  assert.match(await row.textContent(), /eve@example\.org/);
  await row.locator('input[name="id"]').check();
  await admin.click('#comments-bulk button:has-text("Approve selected")');
  await said(admin, "#comments-status", /^Comments approved: 1$/);
  // The list is read again after the answer: wait for it to say so.
  await admin.locator("#comments-empty").waitFor({ state: "visible" });
  assert.equal(await admin.locator("#comments-empty").isVisible(), true, "none waits any more");

  // The reader's open page shows it, live.
  await eventually("the open page shows the approved comment", async () =>
    (await shownComments(reader)).some((text) => text.includes("What a clear explanation.")),
  );
  assert.equal(await reader.evaluate(() => window.notReloaded), true, "the page was not reloaded");
  assert.match(await reader.locator("#comments .comment-author").first().textContent(), /Eve Visitor/);
  assert.equal(await reader.locator("#comments").textContent().then((t) => t.includes("eve@example.org")), false);

  // Eve, known now, answers herself with the Reply button: shown at once.
  await writer.reload();
  await writer.click('#comments button[data-reply]:has-text("Reply")');
  await said(writer, "#comments .comment-replying", /Replying to Eve Visitor/);
  await form.locator('input[name="name"]').fill("Eve Visitor");
  await form.locator('input[name="email"]').fill("eve@example.org");
  await form.locator('textarea[name="body"]').fill("And one more thing.");
  await form.locator('button[type="submit"]').click();
  await said(writer, "#comments .comment-status", /your comment is on the page/);
  await eventually("the reply is shown under the comment", async () =>
    (await writer.locator("#comments .comment.depth-1 .comment-body").allTextContents()).some((t) => t.includes("And one more thing.")),
  );
  await eventually("the reader sees the reply too", async () =>
    (await shownComments(reader)).some((text) => text.includes("And one more thing.")),
  );
  await writerContext.close();
  await readerContext.close();
  await adminContext.close();
});

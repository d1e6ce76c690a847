// Forms in a real browser: an editor builds a form in the admin (a question
// of each kind they need, one required, a choice with options, where the
// answers go), a visitor fills it in on the site (a wrong answer named, what
// was typed kept), and the answers are in the admin, in the CSV file and in
// a real SMTP server's mailbox.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, appendFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { eventually, logOn as logOnAs, mailBody, said, serverAndBrowser, startSmtpSink } from "./helpers.mjs";

const PASSWORD = "browser-test-forms-password";
const root = resolve(import.meta.dirname, "../..");
const smtp = await startSmtpSink();
const env = serverAndBrowser({
  env: { BULWARK_ADMIN_PASSWORD: PASSWORD },
  prepare(dir) {
    cpSync(join(root, "sites", "default"), join(dir, "sites", "default"), { recursive: true });
    appendFileSync(join(dir, "sites", "default", "site.toml"), smtp.config);
  },
});

/// Fills in the builder's last field.
async function lastField(page, { label, type, required, options }) {
  const row = page.locator("#form-fields > li").last();
  await row.locator(".f-label").fill(label);
  await row.locator(".f-type").selectOption(type);
  if (required) await row.locator(".f-required").check();
  if (options) await row.locator(".f-options").fill(options.join("\n"));
}

test("a form built in the admin is filled in on the site, and its answers are in the admin, the CSV file and the mail", async () => {
  const context = await env.browser.newContext({ acceptDownloads: true });
  const admin = await logOnAs(env.server, context, PASSWORD);

  // A new form, from the Forms screen.
  await admin.click('nav[aria-label="Admin"] a:has-text("Forms")');
  await admin.waitForURL(env.server.url + "/admin/forms");
  assert.match(await admin.locator("main table").textContent(), /Contact/, "the starter's contact form is listed");
  await admin.fill('#new-form input[name="name"]', "signup");
  await admin.fill('#new-form input[name="title"]', "Sign up for the workshop");
  await Promise.all([admin.waitForURL(/\/admin\/edit\/\d+$/), admin.click('#new-form button[type="submit"]')]);
  const formId = admin.url().match(/(\d+)$/)[1];

  // Its questions, built in the editor.
  await admin.click("#form-add-field");
  await lastField(admin, { label: "Your name", type: "text", required: true });
  await admin.click("#form-add-field");
  await lastField(admin, { label: "E-mail", type: "email", required: true });
  await admin.click("#form-add-field");
  await lastField(admin, { label: "Which day", type: "choice", required: true, options: ["Monday", "Friday"] });
  await admin.click("#form-add-field");
  await lastField(admin, { label: "Anything else", type: "textarea" });
  await admin.fill("#form-recipients", "desk@example.org");
  await admin.fill("#form-thanks", "See you at the workshop!");
  await admin.click("#form-save");
  await said(admin, "#form-status", /^Saved the form\.$/);

  // A visitor fills it in on its page: first without a day.
  const visitorContext = await env.browser.newContext();
  const visitor = await visitorContext.newPage();
  await visitor.goto(`${env.server.url}/page/${formId}`);
  await visitor.fill('input[name="your_name"]', "Eve Visitor");
  await visitor.fill('input[name="e_mail"]', "eve@example.org");
  await visitor.fill('textarea[name="anything_else"]', "I bring a friend.");
  await Promise.all([visitor.waitForURL(`${env.server.url}/forms/${formId}/submit`), visitor.click('form[data-site-form] button[type="submit"]')]);
  assert.match(await visitor.locator(".field-error").textContent(), /choose one/);
  assert.equal(await visitor.locator('input[name="your_name"]').inputValue(), "Eve Visitor", "what was typed is kept");
  assert.equal(await visitor.locator('textarea[name="anything_else"]').inputValue(), "I bring a friend.");
  await visitor.check('input[name="which_day"][value="Friday"]');
  await visitor.click('form[data-site-form] button[type="submit"]');
  await said(visitor, "main", /See you at the workshop!/);

  // The answers in the admin...
  await admin.goto(`${env.server.url}/admin/forms?form=${formId}`);
  const row = admin.locator("#answers-table tbody tr").first();
  await row.waitFor();
  assert.match(await row.textContent(), /Eve Visitor.*eve@example\.org.*Friday.*I bring a friend\./s);

  // ...in the CSV file...
  const [download] = await Promise.all([admin.waitForEvent("download"), admin.click('a:has-text("Download as CSV")')]);
  const csv = await (await download.createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString("utf8"));
  const [head, first] = csv.split(/\r?\n/);
  assert.equal(head, "Your name,E-mail,Which day,Anything else,Sent,From");
  assert.match(first, /^Eve Visitor,eve@example\.org,Friday,I bring a friend\.,/);

  // ...and in the mail.
  const mail = await eventually("the answers are mailed", () => smtp.mails().find((m) => /desk@example\.org/.test(m)));
  const body = mailBody(mail);
  assert.match(body, /Your name: Eve Visitor/);
  assert.match(body, /Which day: Friday/);
  await visitorContext.close();
  await context.close();
});

// A person's account, done entirely in the browser: an administrator adds
// Eve in the admin; Eve forgets her password, asks for a link, gets it by
// mail (a real SMTP server, Python's aiosmtpd, writing a maildir), chooses a
// new one and logs on with it; then she sets up a second factor on her
// account page (the secret as the QR code carries it, a code the test's
// authenticator makes from it), keeps her recovery codes, logs on with one of
// them, then with a code, makes new recovery codes, and turns it off.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, appendFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { join, resolve } from "node:path";
import { eventually, logOn as logOnAs, mailBody, said, serverAndBrowser, startSmtpSink } from "./helpers.mjs";

const PASSWORD = "browser-test-account-admin";
const root = resolve(import.meta.dirname, "../..");

// The SMTP server (aiosmtpd writing a maildir).
const smtp = await startSmtpSink();

// The starter site, sending its mail to that server.
const env = serverAndBrowser({
  env: { BULWARK_ADMIN_PASSWORD: PASSWORD },
  prepare(dir) {
    cpSync(join(root, "sites", "default"), join(dir, "sites", "default"), { recursive: true });
    appendFileSync(
      join(dir, "sites", "default", "site.toml"),
      smtp.config,
    );
  },
});

/// The first link of a mail's body.
function linkIn(raw) {
  return mailBody(raw).match(/https?:\/\/\S+/)[0];
}

/// RFC 6238's code (SHA-1, 6 digits, 30 s) for `secret` (base32) at time step `step`.
function totp(secret, step) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of secret.replace(/=+$/, "").toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, "0");
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  const number = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(number).padStart(6, "0");
}
const stepNow = () => Math.floor(Date.now() / 1000 / 30);

/// Logs Eve on at /logon with `password`, and a code when asked for one.
async function logOnEve(page, password, code) {
  await page.goto(env.server.url + "/logon");
  await page.fill("#username", "eve");
  await page.fill("#password", password);
  await page.click('form.auth-form button[type="submit"]');
  if (code !== undefined) {
    await page.locator("#code").waitFor();
    assert.match(await page.locator("main").textContent(), /Logging on as\s+eve/, "the code step keeps who is logging on");
    await page.fill("#code", code);
    await page.click('form.auth-form button[type="submit"]');
  }
  await page.waitForURL(env.server.url + "/en/");
}

test("Eve resets her password by mail, then sets up, uses and turns off a second factor, all in the browser", async () => {
  // The administrator adds Eve, with an e-mail address.
  const admin = await env.browser.newContext();
  const adminPage = await logOnAs(env.server, admin, PASSWORD);
  await adminPage.goto(env.server.url + "/admin/users");
  await adminPage.fill('#new-user input[name="username"]', "eve");
  await adminPage.fill('#new-user input[name="password"]', "first-password-of-eve");
  await adminPage.fill('#new-user input[name="email"]', "eve@example.org");
  // (Adding a user shows the list again, with the new user in it.)
  await adminPage.click('#new-user button[type="submit"]');
  await adminPage.locator('#users th a:has-text("eve")').waitFor();
  await admin.close();

  // Eve forgot it: from the logon page, by mail.
  const context = await env.browser.newContext();
  const page = await context.newPage();
  await page.goto(env.server.url + "/logon");
  await page.click('a:has-text("Forgot your password?")');
  await page.fill("#account", "eve");
  await page.click('form.auth-form button[type="submit"]');
  await said(page, ".notice", /./);
  const mail = await eventually("the reset mail arrives", () => smtp.mails().find((m) => /eve@example\.org/.test(m)));
  assert.match(mail, /Subject: Choose a new password/);
  // (The link names the site's configured host; the test's server is on a port of its own.)
  await page.goto(env.server.url + new URL(linkIn(mail)).pathname);
  await page.fill("#password", "second-password-of-eve");
  await page.fill("#password_again", "second-password-of-eve");
  await page.click('form.auth-form button[type="submit"]');
  await said(page, ".notice", /password of eve was changed/);
  await logOnEve(page, "second-password-of-eve");

  // Her account page: a second factor, set up with the password and a code.
  await page.goto(env.server.url + "/logon/account");
  assert.match(await page.locator("#second-factor-state").textContent(), /^Off/);
  await page.fill("#start-password", "not-her-password");
  await page.click('#start-form button[type="submit"]');
  await said(page, "#account-error", /not your password: nothing was changed/);
  await page.fill("#start-password", "second-password-of-eve");
  await page.click('#start-form button[type="submit"]');
  assert.equal(await page.locator(".qr svg").count(), 1, "the QR code is shown");
  const secret = (await page.locator("#totp-secret").textContent()).trim();
  assert.match(await page.locator("#totp-uri").textContent(), new RegExp(`^otpauth://totp/.*secret=${secret}`));
  // A wrong code keeps the enrolment on the page.
  await page.fill("#code", "000000" === totp(secret, stepNow()) ? "111111" : "000000");
  await page.click('#confirm-form button[type="submit"]');
  await said(page, "#account-error", /does not match/);
  assert.equal((await page.locator("#totp-secret").textContent()).trim(), secret, "the same secret, shown again");
  await page.fill("#code", totp(secret, stepNow()));
  await page.click('#confirm-form button[type="submit"]');
  await said(page, "#account-message", /asks for a code from the app at every logon/);
  const codes = await page.locator("#recovery-codes code").allTextContents();
  assert.equal(codes.length, 10, "ten recovery codes, shown once");
  await page.click('a:has-text("I have kept them")');
  assert.match(await page.locator("#second-factor-state").textContent(), /On: .*10\s+unused recovery codes/s);

  // Logging on now takes a code: a recovery code works, once.
  await page.goto(env.server.url + "/logoff");
  await page.click('main button[type="submit"]');
  await logOnEve(page, "second-password-of-eve", codes[0]);
  await page.goto(env.server.url + "/logon/account");
  assert.match(await page.locator("#second-factor-state").textContent(), /9\s+unused recovery codes/);
  // And a code from the app (the next step's: the one that confirmed is spent).
  await page.goto(env.server.url + "/logoff");
  await page.click('main button[type="submit"]');
  await logOnEve(page, "second-password-of-eve", totp(secret, stepNow() + 1));

  // New recovery codes replace the old ones; then the second factor goes.
  await page.goto(env.server.url + "/logon/account");
  await page.fill("#manage-password", "second-password-of-eve");
  await page.click('#manage-form button[value="recovery"]');
  const fresh = await page.locator("#recovery-codes code").allTextContents();
  assert.equal(fresh.length, 10);
  assert.ok(!fresh.includes(codes[1]), "the new codes are new");
  await page.click('a:has-text("I have kept them")');
  await page.fill("#manage-password", "second-password-of-eve");
  await page.click('#manage-form button[value="disable"]');
  await said(page, "#account-message", /no longer asks for a code/);
  assert.match(await page.locator("#second-factor-state").textContent(), /^Off/);
  await page.goto(env.server.url + "/logoff");
  await page.click('main button[type="submit"]');
  await logOnEve(page, "second-password-of-eve");
  await context.close();
});

test("An administrator turns the mail about the whole site off and on again on their account page, by mouse and by keyboard", async () => {
  const context = await env.browser.newContext();
  const page = await logOnAs(env.server, context, PASSWORD);
  await page.goto(env.server.url + "/logon/account");
  const box = page.locator('#mail-form input[name="site_activity"]');
  assert.equal(await box.isChecked(), true, "on for an account made by hand");
  await box.uncheck();
  await page.click('#mail-form button[type="submit"]');
  await page.locator("#account-message").waitFor();
  assert.match(await page.locator("#account-message").textContent(), /no longer mailed/);
  await page.goto(env.server.url + "/logon/account");
  assert.equal(await box.isChecked(), false, "kept");

  await box.focus();
  await page.keyboard.press("Space");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await page.locator("#account-message").waitFor();
  assert.match(await page.locator("#account-message").textContent(), /every new comment and form answer/);
  assert.equal(await box.isChecked(), true);
  await context.close();
});

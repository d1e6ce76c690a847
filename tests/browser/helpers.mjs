// Starts a real `bulwark serve` on a free port in a temporary folder, and a headless
// Debian Chromium driven by playwright-core.
import { spawn, spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before } from "node:test";
import { chromium } from "playwright-core";

const root = resolve(import.meta.dirname, "../..");

/// Where a test's screenshots go: `docs/{folder}` (the pictures the docs show)
/// with `BULWARK_SCREENSHOTS=1`, else a folder under the system's temporary
/// one, so a test run leaves the checkout as it was. Taken either way.
export function screenshotsDir(folder) {
  const dir =
    process.env.BULWARK_SCREENSHOTS === "1"
      ? join(root, "docs", folder)
      : join(tmpdir(), "bulwark-screenshots", folder);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function freePort() {
  return new Promise((ok) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/// The binary under test: `BULWARK_BIN`, or the debug build in cargo's target
/// folder (`CARGO_TARGET_DIR` when set, as for `cargo build`).
function bulwarkBinary() {
  if (process.env.BULWARK_BIN) return process.env.BULWARK_BIN;
  return join(resolve(root, process.env.CARGO_TARGET_DIR || "target"), "debug/bulwark");
}

/// `prepare(dir)`, when given, runs before the server starts (to lay out a site
/// of the test's own in `dir/sites`; otherwise the server writes the starter site).
/// `env` adds environment variables for the server (`BULWARK_ADMIN_PASSWORD`).
export async function startBulwark({ prepare, env = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-browser-"));
  prepare?.(dir);
  const port = await freePort();
  const bin = bulwarkBinary();
  const child = spawn(bin, ["serve", "--access-log", "off", "--listen", `127.0.0.1:${port}`], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, BULWARK_LOG: "warn", ...env },
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url + "/")).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dir,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/// One server and one browser for the tests of a file: started before them,
/// stopped after (`options` as for `startBulwark`). Read `env.server` and `env.browser` inside the tests.
export function serverAndBrowser(options) {
  const env = { server: null, browser: null };
  before(async () => {
    env.server = await startBulwark(options);
    env.browser = await launchBrowser();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  return env;
}

/// A `prepare` for `serverAndBrowser`: the starter site, with the site's API
/// token set to `token` (for scripts: `callApi`).
export function starterWithToken(token) {
  return (dir) => {
    const site = join(dir, "sites/default");
    cpSync(resolve(root, "sites/default"), site, { recursive: true });
    const toml = join(site, "site.toml");
    writeFileSync(toml, readFileSync(toml, "utf8").replace('# token = "generated"', `token = "${token}"`));
  };
}

/// `method path` on `server`'s JSON API with the site's token: the parsed
/// answer; an answer that is not a success fails the test, saying it.
export async function callApi(server, token, method, path, body) {
  const res = await fetch(server.url + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/// A page of `context` logged on to `server` as `username`, on /admin.
export async function logOn(server, context, password, username = "admin") {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1100, height: 900 });
  await page.goto(server.url + "/admin");
  await page.waitForURL(/\/logon\?next=/);
  await page.fill("#username", username);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL(server.url + "/admin"), page.click('form.auth-form button[type="submit"]')]);
  return page;
}

/// A JPEG drawn in the page's canvas (1200 x 800): `hue` makes each one different.
export async function pictureBytes(page, hue) {
  const base64 = await page.evaluate((hue) => {
    const c = document.createElement("canvas");
    c.width = 1200;
    c.height = 800;
    const g = c.getContext("2d");
    const grad = g.createLinearGradient(0, 0, 1200, 800);
    grad.addColorStop(0, `hsl(${hue}, 70%, 60%)`);
    grad.addColorStop(1, `hsl(${hue + 120}, 70%, 30%)`);
    g.fillStyle = grad;
    g.fillRect(0, 0, 1200, 800);
    g.fillStyle = "white";
    g.beginPath();
    g.arc(600, 400, 150, 0, 2 * Math.PI);
    g.fill();
    return c.toDataURL("image/jpeg", 0.9).split(",")[1];
  }, hue);
  return Buffer.from(base64, "base64");
}

/// Waits until the text of `selector` matches `pattern`; fails saying what it said.
export async function said(page, selector, pattern) {
  try {
    await page.waitForFunction(
      ([selector, source]) => new RegExp(source).test(document.querySelector(selector).textContent),
      [selector, pattern.source],
      { timeout: 15000 },
    );
  } catch (e) {
    const text = await page.locator(selector).textContent().catch(() => "(nothing)");
    throw new Error(`${selector} never matched ${pattern}: it says ${JSON.stringify(text)}`);
  }
}

/// A new article made on /admin/new by a logged-on `page`, left in its editor; its id.
export async function newArticle(server, page, title) {
  await page.goto(server.url + "/admin/new");
  await page.selectOption('#new-resource select[name="category"]', "article");
  await page.fill('#new-resource input[name="title"]', title);
  await Promise.all([page.waitForURL(/\/admin\/edit\/\d+$/), page.click('#new-resource button[type="submit"]')]);
  return Number(page.url().match(/(\d+)$/)[1]);
}

/// Asks `check` (which may be async) until it gives something truthy, and
/// gives that; fails naming `what` after `timeout` ms.
export async function eventually(what, check, timeout = 15000) {
  const end = Date.now() + timeout;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/// axe-core's serious and critical findings on `page` as it is now, one line a
/// rule (how many elements, the first, what is wrong); an empty list when
/// there are none. axe runs inside
/// the page (evaluated over the DevTools protocol, which the page's CSP
/// does not govern).
export async function accessibilityProblems(page) {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => {
        const n = v.nodes[0];
        const why = n.failureSummary.split("\n").slice(1).join(" ").trim();
        return `${v.id} on ${v.nodes.length} element(s), the first ${n.target.join(" ")}: ${why}`;
      });
  });
  return found;
}

/// A real SMTP server for a test file (Python's aiosmtpd, writing every
/// message into a maildir; scripts/ensure-smtp.sh installs it), stopped when
/// the file's tests end. `config` is the `[mail]` table a site sends through
/// it with; `mails()` every message received so far, as text.
export async function startSmtpSink() {
  const maildir = mkdtempSync(join(tmpdir(), "bulwark-maildir-"));
  const port = await freePort();
  const python = ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import aiosmtpd"]).status === 0);
  if (!python) throw new Error("no python3 with aiosmtpd: run scripts/ensure-smtp.sh");
  const smtp = spawn(python, ["-m", "aiosmtpd", "-n", "-l", `127.0.0.1:${port}`, "-c", "aiosmtpd.handlers.Mailbox", join(maildir, "box")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  after(() => {
    smtp.kill();
    rmSync(maildir, { recursive: true, force: true });
  });
  return {
    port,
    config: `\n[mail]\nsmtp = "smtp://127.0.0.1:${port}"\nfrom = "Bulwark <noreply@example.org>"\n`,
    mails() {
      const fresh = join(maildir, "box", "new");
      if (!existsSync(fresh)) return [];
      return readdirSync(fresh).map((name) => readFileSync(join(fresh, name), "utf8"));
    },
  };
}

/// A mail's body as its reader sees it (quoted-printable undone: lettre
/// wraps long lines so).
export function mailBody(raw) {
  return raw
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join("\n\n")
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

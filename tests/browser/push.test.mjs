// The live board of the starter site: what one browser posts, the others show at
// once, over each transport.
import { test } from "node:test";
import assert from "node:assert/strict";
import { serverAndBrowser } from "./helpers.mjs";

// The first administrator's password, so that a test can log on.
const ADMIN_PASSWORD = "browser test password";
const env = serverAndBrowser({ env: { BULWARK_ADMIN_PASSWORD: ADMIN_PASSWORD } });

/// The live board over `transport`, in a new page of `context` (a browser
/// context: its own cookies), or of the shared browser.
async function openBoard(transport, context = env.browser) {
  const page = await context.newPage();
  await page.goto(`${env.server.url}/live?transport=${transport}`);
  await page.waitForSelector('#push-state[data-state="connected"]', { timeout: 10000 });
  assert.match(await page.textContent("#push-state"), new RegExp(transport));
  return page;
}

for (const transport of ["websocket", "sse", "poll"]) {
  test(`a post appears live in another browser over ${transport}`, async () => {
    const reader = await openBoard(transport);
    const writer = await openBoard("websocket");
    const text = `hello over ${transport} ${Date.now()}`;
    await writer.fill('input[name="text"]', text);
    await writer.click('button[type="submit"]');
    await reader.waitForSelector(`#board li:text-is("${text}")`, { timeout: 10000 });
    // The writer sees its own post too.
    await writer.waitForSelector(`#board li:text-is("${text}")`, { timeout: 10000 });
    await reader.close();
    await writer.close();
  });
}

test("a page opened later gets the latest post as a snapshot", async () => {
  const writer = await openBoard("websocket");
  const text = `snapshot ${Date.now()}`;
  await writer.fill('input[name="text"]', text);
  await writer.click('button[type="submit"]');
  await writer.waitForSelector(`#board li:text-is("${text}")`);
  const late = await openBoard("websocket");
  await late.waitForSelector(`#board li:text-is("${text}")`, { timeout: 10000 });
  await writer.close();
  await late.close();
});

test("markup in a post is shown as text, never run", async () => {
  const reader = await openBoard("websocket");
  const writer = await openBoard("websocket");
  const text = `<img src=x onerror="window.pwned=1"> ${Date.now()}`;
  await writer.fill('input[name="text"]', text);
  await writer.click('button[type="submit"]');
  await reader.waitForSelector(`#board li:text-is('${text}')`, { timeout: 10000 });
  assert.equal(await reader.evaluate(() => window.pwned), undefined);
  await reader.close();
  await writer.close();
});

for (const transport of ["websocket", "sse", "poll"]) {
  test(`a client comes back over ${transport} with its token and gets what it missed`, async () => {
    const reader = await openBoard(transport);
    const urls = [];
    reader.on("request", (r) => urls.push(r.url()));
    reader.on("websocket", (ws) => urls.push(ws.url()));
    // A second client on the page, to drop and resume at will.
    const id = await reader.evaluate(
      (t) =>
        new Promise((connected) => {
          const push = (window.resumed = Bulwark.push({ transports: [t] }));
          push.got = [];
          push.subscribe("site/board", (m) => push.got.push(m.text));
          push.on("state", (s) => s.state === "connected" && connected(s.client));
        }),
      transport,
    );
    await reader.waitForFunction(() => window.resumed.positions["site/board"]);
    await reader.evaluate(() => {
      window.resumed.transport.close();
      window.resumed.transport = null;
    });
    const writer = await openBoard("websocket");
    const text = `missed over ${transport} ${Date.now()}`;
    await writer.fill('input[name="text"]', text);
    await writer.click('button[type="submit"]');
    await writer.waitForSelector(`#board li:text-is("${text}")`, { timeout: 10000 });
    await reader.evaluate(() => window.resumed.connect());
    await reader.waitForFunction((t) => window.resumed.got.includes(t), text, { timeout: 10000 });
    assert.equal(await reader.evaluate(() => window.resumed.clientId), id);
    // The token travelled out of every URL the page asked for.
    const token = await reader.evaluate(() => window.resumed.token);
    assert.match(token, /^[0-9a-f]{32}$/);
    assert.ok(urls.some((u) => u.includes(`client=${id}`)), urls.join("\n"));
    assert.ok(!urls.some((u) => u.includes(token)), urls.join("\n"));
    await reader.close();
    await writer.close();
  });
}

test("a logged-on visitor's board works over every transport", async () => {
  // A context of its own: the session cookie stays here.
  const context = await env.browser.newContext();
  const logon = await context.newPage();
  await logon.goto(`${env.server.url}/logon`);
  await logon.fill("#username", "admin");
  await logon.fill("#password", ADMIN_PASSWORD);
  await Promise.all([logon.waitForURL(`${env.server.url}/en/`), logon.click('button[type="submit"]')]);
  // Event streams and long-polls send their commands with POST, which a
  // session needs its CSRF token for (the hello brings it); WebSockets show
  // the page's origin.
  const boards = [];
  for (const transport of ["websocket", "sse", "poll"]) {
    boards.push([transport, await openBoard(transport, context)]);
  }
  for (const [transport, writer] of boards) {
    const text = `logged on, over ${transport} ${Date.now()}`;
    await writer.fill('input[name="text"]', text);
    await writer.click('button[type="submit"]');
    for (const [, reader] of boards) {
      await reader.waitForSelector(`#board li:text-is("${text}")`, { timeout: 10000 });
    }
  }
  await context.close();
});

// The live board of the starter site: what one browser posts, the others show at
// once, over each transport.
import { test } from "node:test";
import assert from "node:assert/strict";
import { serverAndBrowser } from "./helpers.mjs";

const env = serverAndBrowser();

async function openBoard(transport) {
  const page = await env.browser.newPage();
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

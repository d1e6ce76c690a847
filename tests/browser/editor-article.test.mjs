// An ordinary news article, written whole in the editor as an editor would:
// text with subheadings, a quote, a line and a link found by the page's title;
// two pictures put into the text (one uploaded in the picture dialog, one
// pasted into the text), each with the words a reader who cannot see it gets,
// a caption and a place; a tag; scheduled, then published; reopened and
// saved without a change (nothing written); an old version restored (still
// published). The public page shows the pictures as responsive images. Also:
// Ctrl+S inside the text saves, no empty paragraph is stored after a last
// heading, a paste from a word processor keeps its words and their bold and
// italic only, and a second upload in the "Picture" section does not replace
// the first. With BULWARK_SCREENSHOTS=1 the editor, the picture dialog, the
// tags and the link dialog are photographed into docs/admin/look/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  accessibilityProblems, callApi, eventually, logOn, newArticle, pictureBytes, said, screenshotsDir,
  serverAndBrowser, starterWithToken,
} from "./helpers.mjs";

const TOKEN = "browser-test-token";
const PASSWORD = "browser-test-admin-password";
const SHOTS = screenshotsDir(join("admin", "look"));

const env = serverAndBrowser({ prepare: starterWithToken(TOKEN), env: { BULWARK_ADMIN_PASSWORD: PASSWORD } });

function api(method, path, body) {
  return callApi(env.server, TOKEN, method, path, body);
}

async function stored(id) {
  const r = await api("GET", `/api/rsc/${id}`);
  const revisions = (await api("GET", `/api/rsc/${id}/revisions`)).revisions;
  return { r, revisions };
}

async function save(page) {
  await page.click('#editor button[type="submit"]');
  await said(page, "#status", /^Saved\.$/);
}

// Types at the end of the text.
async function typeAtEnd(page, text) {
  await page.locator("#body-editor").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(text);
}

// A picture file put into the text as a browser does on a paste or a drop.
async function pictureInto(page, how, name, hue) {
  const b64 = (await pictureBytes(page, hue)).toString("base64");
  await page.evaluate(([how, name, b64]) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], name, { type: "image/jpeg" }));
    const init = { bubbles: true, cancelable: true };
    const event = how === "drop"
      ? new DragEvent("drop", { ...init, dataTransfer: data })
      : new ClipboardEvent("paste", { ...init, clipboardData: data });
    document.getElementById("body-editor").dispatchEvent(event);
  }, [how, name, b64]);
}

// The picture dialog, filled in and confirmed for the chosen picture.
async function describePicture(page, { alt, caption, align, size }) {
  await said(page, "#picture-chosen", /^Chosen: /);
  await page.fill("#picture-alt", alt);
  if (caption) await page.fill("#picture-caption", caption);
  await page.check(`#picture-dialog input[name="align"][value="${align}"]`);
  if (size) await page.check(`#picture-dialog input[name="size"][value="${size}"]`);
  await page.click("#picture-insert");
  await page.locator("#picture-dialog").waitFor({ state: "hidden" });
}

test("an article written whole: two pictures in the text, a tag, scheduled, published, reopened unchanged, an old version restored", async () => {
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  const id = await newArticle(env.server, page, "Harbour day");
  await page.locator("#body-editor").waitFor({ state: "visible" });
  await typeAtEnd(page, "The boats came in early.");

  // The first picture: uploaded in the dialog; alt text is asked for.
  await page.click('[data-command="picture"]');
  await page.locator("#picture-dialog").waitFor({ state: "visible" });
  assert.deepEqual(await accessibilityProblems(page), [], "the picture dialog");
  await page.setInputFiles("#picture-file", { name: "quay.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 200) });
  await said(page, "#picture-chosen", /^Chosen: /);
  await page.click("#picture-insert");
  await said(page, "#picture-status", /Say what the picture shows, or mark it decorative\./);
  await page.screenshot({ path: join(SHOTS, "picture-dialog-light-wide.png") });
  await describePicture(page, { alt: "Fishing boats at the quay", caption: "Morning at the quay", align: "right", size: "small" });

  // Then a subheading, and the second picture pasted into the text.
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.selectOption('[data-command="block"]', "H3");
  await page.keyboard.type("At the market");
  await page.keyboard.press("Enter");
  await page.keyboard.type("Fish sold out by ten.");
  await pictureInto(page, "paste", "market.jpg", 40);
  await page.locator("#picture-dialog").waitFor({ state: "visible" });
  await said(page, "#picture-status", /^Uploaded market\.jpg/);
  await describePicture(page, { alt: "Crates of fish on the market", align: "center", size: "medium" });

  const inEditor = await page.evaluate(() =>
    Array.from(document.querySelectorAll("#body-editor figure.picture")).map((f) => ({
      class: f.className, alt: f.querySelector("img").getAttribute("alt"), caption: f.querySelector("figcaption")?.textContent || "",
    })));
  assert.deepEqual(inEditor, [
    { class: "picture align-right size-small", alt: "Fishing boats at the quay", caption: "Morning at the quay" },
    { class: "picture align-center size-medium", alt: "Crates of fish on the market", caption: "" },
  ]);

  // A tag, typed.
  await page.fill("#tag-input", "harbour");
  await page.press("#tag-input", "Enter");
  await said(page, "#tags-status", /harbour/);

  // Scheduled: saved with a start tomorrow, the header says so at once.
  await page.check("#published");
  const tomorrow = new Date(Date.now() + 86400000);
  const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  await page.fill("#publication_start", local);
  await save(page);
  await said(page, "#state", /^scheduled/);
  await page.screenshot({ path: join(SHOTS, "editor-picture-light-wide.png"), fullPage: true });

  // Published now: no start date.
  await page.fill("#publication_start", "");
  await save(page);
  await said(page, "#state", /^published$/);

  const saved = await stored(id);
  assert.equal(saved.r.published, true);
  assert.equal(saved.r.props.body.match(/<figure/g).length, 2, saved.r.props.body);
  assert.doesNotMatch(saved.r.props.body, /<p><br><\/p>$/, "no empty paragraph at the end");
  assert.match(saved.r.props.body, /<h3>At the market<\/h3>/);

  // The public page: both pictures as responsive images, described.
  const visitor = await fetch(`${env.server.url}/page/${id}`, { redirect: "follow" });
  assert.equal(visitor.status, 200);
  const html = await visitor.text();
  // (The stored figure keeps the stored form: unquoted attributes.)
  const imgs = [...html.matchAll(/<figure class="?picture[^>]*>(<img [^>]*>)/g)].map((m) => m[1]);
  assert.equal(imgs.length, 2, "two pictures in the text");
  for (const img of imgs) {
    assert.match(img, / srcset="\/media\/preview\/\d+\/medium\/[0-9a-f]+ \d+w, /, img);
    assert.match(img, / sizes="\(max-width: \d+px\) 100vw, \d+px"/, img);
    assert.match(img, / width="\d+" height="\d+"/, img);
    assert.match(img, / loading="lazy"/, img);
    assert.doesNotMatch(img, /\/media\/file\//, "never the original");
  }
  assert.match(imgs[0], / alt="Fishing boats at the quay"/);
  assert.match(imgs[1], / alt="Crates of fish on the market"/);
  assert.match(html, /<figcaption>Morning at the quay<\/figcaption>/);
  // Each srcset entry is a preview that answers.
  const first = imgs[0].match(/src="([^"]+)"/)[1];
  assert.equal((await fetch(env.server.url + first)).headers.get("content-type"), "image/jpeg");

  // Reopened and saved without a change: nothing written.
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  await page.locator("#body-editor").waitFor({ state: "visible" });
  await save(page);
  const again = await stored(id);
  assert.equal(again.r.version, saved.r.version, "no new version");
  assert.equal(again.revisions.length, saved.revisions.length, "no new revision");

  // An old version back: its content, and the page stays published.
  const oldest = saved.revisions[saved.revisions.length - 1];
  const restore = page.getByRole("button", { name: `Restore version ${oldest.version}` });
  await restore.waitFor();
  page.once("dialog", (dialog) => dialog.accept());
  await Promise.all([page.waitForEvent("load"), restore.click()]);
  const restored = await api("GET", `/api/rsc/${id}`);
  assert.equal(restored.published, true, "still published");
  assert.doesNotMatch(restored.props.body || "", /<figure/);
  await page.close();
});

test("the toolbar writes headings, quotes, lines, links found by title and videos by address; Ctrl+S in the text saves; a paste keeps words, bold and italic", async () => {
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  const id = await newArticle(env.server, page, "Toolbar");
  const about = (await api("GET", "/api/search?text=About&cat=text")).items[0];
  assert.ok(about, "the starter has an About page");
  await page.locator("#body-editor").waitFor({ state: "visible" });
  await typeAtEnd(page, "Read more here");
  // A link: the words selected, Ctrl+K, the page found by its title.
  for (let i = 0; i < 4; i++) await page.keyboard.press("Shift+ArrowLeft");
  await page.keyboard.press("Control+k");
  await page.locator("#link-dialog").waitFor({ state: "visible" });
  await page.fill("#link-url", "About");
  const found = page.locator("#link-found button").first();
  await found.waitFor();
  assert.deepEqual(await accessibilityProblems(page), [], "the link dialog");
  await page.screenshot({ path: join(SHOTS, "link-dialog-light-wide.png") });
  await found.click();
  await said(page, "#link-status", /^Links to /);
  await page.click('#link-dialog button[value="set"]');
  await page.locator("#link-dialog").waitFor({ state: "hidden" });
  // An e-mail address typed becomes a mailto: link.
  await page.keyboard.press("End");
  await page.keyboard.type(" or write to ");
  await page.click('[data-command="link"]');
  await page.fill("#link-url", "desk@example.org");
  await page.click('#link-dialog button[value="set"]');
  await page.locator("#link-dialog").waitFor({ state: "hidden" });

  await page.keyboard.press("Enter");
  await page.click('[data-command="quote"]');
  await page.keyboard.type("Fresh every day.");
  await page.keyboard.press("Enter");
  // The new paragraph is still in the quote; the same button takes it out.
  assert.equal(await page.getAttribute('[data-command="quote"]', "aria-pressed"), "true");
  await page.click('[data-command="quote"]');
  await page.click('[data-command="rule"]');
  await page.selectOption('[data-command="block"]', "H4");
  await page.keyboard.type("Last words");

  // A paste from Google Docs and from Word: words, bold and italic kept.
  await page.keyboard.press("Enter");
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData("text/html",
      '<meta charset="utf-8"><b style="font-weight:normal;" id="docs-internal-guid-1a2b"><p dir="ltr" style="line-height:1.38;margin-top:0pt">' +
      '<span style="font-size:11pt;font-family:Arial;font-weight:700">Strong</span><span style="font-size:11pt;font-style:italic"> and leaning</span></p></b>' +
      '<p class="MsoNormal" style="margin:0cm"><span lang="EN-GB" style="mso-ansi-language:EN-GB">From Word<o:p></o:p></span></p>');
    data.setData("text/plain", "Strong and leaning\nFrom Word");
    document.getElementById("body-editor").dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await eventually("the paste is in the text", () => page.evaluate(() => /From Word/.test(document.getElementById("body-editor").textContent)));

  // Ctrl+S with the cursor in the text.
  await page.locator("#body-editor").press("Control+s");
  await said(page, "#status", /^Saved\.$/);
  const body = (await api("GET", `/api/rsc/${id}`)).props.body;
  assert.match(body, new RegExp(`<a href=/page/${about.id}[ >][^>]*>?here</a>`), body);
  assert.match(body, /<a href=mailto:desk@example\.org[ >][^>]*>?desk@example\.org<\/a>/, body);
  assert.match(body, /<blockquote><p>Fresh every day\.<\/p><\/blockquote>/, body);
  assert.match(body, /<\/blockquote><hr><h4>Last words<\/h4>/, body);
  assert.match(body, /<b>Strong<\/b>/, body);
  assert.match(body, /<i> and leaning<\/i>/, body);
  assert.doesNotMatch(body, /docs-internal|MsoNormal|style|o:p|font-weight/, body);
  assert.doesNotMatch(body, /<p><br><\/p>$/, "no empty paragraph at the end");

  // A video by its address: a link in the text, the player on the page.
  await page.locator("#body-editor").click();
  await page.keyboard.press("Control+End");
  await page.click('[data-command="embed"]');
  await page.locator("#embed-dialog").waitFor({ state: "visible" });
  assert.deepEqual(await accessibilityProblems(page), [], "the embed dialog");
  await page.fill("#embed-url", "https://example.org/not-a-video");
  await page.click("#embed-insert");
  await said(page, "#embed-status", /not the address of a video/);
  await page.fill("#embed-url", "https://youtu.be/dQw4w9WgXcQ");
  await page.fill("#embed-caption", "The harbour from the air");
  await page.click("#embed-insert");
  await page.locator("#embed-dialog").waitFor({ state: "hidden" });
  await page.locator("#body-editor").press("Control+s");
  await said(page, "#status", /^Saved\.$/);
  const withVideo = (await api("GET", `/api/rsc/${id}`)).props.body;
  assert.match(withVideo, /<figure class=embed><a href=https:\/\/youtu\.be\/dQw4w9WgXcQ[ >]/, withVideo);
  // Opened again and saved without a change: the figure reads back the same.
  const saved = (await api("GET", `/api/rsc/${id}`)).version;
  await page.goto(`${env.server.url}/admin/edit/${id}`);
  await page.locator("#body-editor").waitFor({ state: "visible" });
  await page.click('#editor button[type="submit"]');
  await said(page, "#status", /^Saved\.$/);
  assert.equal((await api("GET", `/api/rsc/${id}`)).version, saved, "nothing written");
  await api("PATCH", `/api/rsc/${id}`, { published: true });
  const res = await fetch(`${env.server.url}/page/${id}`, { redirect: "follow" });
  const shown = await res.text();
  assert.match(shown, /<iframe src="https:\/\/www\.youtube-nocookie\.com\/embed\/dQw4w9WgXcQ" title="Video on YouTube"[^>]* loading="lazy"[^>]* sandbox="/, shown);
  assert.match(shown, /<figcaption>The harbour from the air<\/figcaption>/);
  assert.match(res.headers.get("content-security-policy"), /frame-src 'self' https:\/\/www\.youtube-nocookie\.com/);
  await page.close();
});

test("a second upload in the Picture section is kept in the library and replaces the first only when chosen; a picture's own words are what pages say of it", async () => {
  const page = await logOn(env.server, await env.browser.newContext(), PASSWORD);
  const id = await newArticle(env.server, page, "Two pictures");
  await page.setInputFiles("#depiction-file", { name: "first.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 10) });
  await said(page, "#depiction-status", /^The picture is saved\.$/);
  const depictions = async () =>
    (await api("GET", `/api/rsc/${id}/edges`)).edges.filter((e) => e.predicate === "depiction").map((e) => e.object);
  const first = await depictions();
  assert.equal(first.length, 1);
  const before = await page.locator("#depiction .current-picture img").getAttribute("src");
  await page.setInputFiles("#depiction-file", { name: "second.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 250) });
  await said(page, "#depiction-status", /^Uploaded second\.jpg to the library; the picture above stays/);
  assert.equal(await page.locator("#depiction .current-picture img").getAttribute("src"), before, "the first stays");
  assert.deepEqual(await depictions(), first, "still the first, alone");
  await page.click("#depiction-use-new");
  await said(page, "#depiction-status", /^The picture is saved\.$/);
  assert.notEqual(await page.locator("#depiction .current-picture img").getAttribute("src"), before, "the new one, as chosen");
  const now = await depictions();
  assert.equal(now.length, 1);
  assert.notDeepEqual(now, first);

  // The picture's own words, given in its editor, are what the page says of it.
  await page.goto(`${env.server.url}/admin/edit/${now[0]}`);
  await page.fill("#alt", "Two gulls on a post");
  await page.fill("#description", "Taken at the harbour, early morning.");
  await save(page);
  const picture = await api("GET", `/api/rsc/${now[0]}`);
  assert.equal(picture.props.alt, "Two gulls on a post");
  assert.equal(picture.props.description, "Taken at the harbour, early morning.");
  await api("PATCH", `/api/rsc/${id}`, { published: true });
  const visitor = await (await fetch(`${env.server.url}/page/${id}`, { redirect: "follow" })).text();
  assert.match(visitor, /<figure class="depiction"><img [^>]*alt="Two gulls on a post"/);
  // And what a link preview shows of the page: the picture, large, and its words.
  assert.match(visitor, /<meta property="og:image" content="https?:\/\/[^"]+\/media\/preview\/\d+\/large\/[0-9a-f]+">/);
  assert.match(visitor, /<meta property="og:image:alt" content="Two gulls on a post">/);
  await page.close();
});

test("the editor's new parts at 390 px and in the dark: nothing wider than the screen, no accessibility problem", async () => {
  for (const scheme of ["light", "dark"]) {
    for (const [name, width] of [["wide", 1280], ["phone", 390]]) {
      const context = await env.browser.newContext({ colorScheme: scheme });
      const page = await logOn(env.server, context, PASSWORD);
      await page.setViewportSize({ width, height: 900 });
      const id = await newArticle(env.server, page, `Look ${scheme} ${name}`);
      await page.locator("#body-editor").waitFor({ state: "visible" });
      await typeAtEnd(page, "A line of text.");
      await page.fill("#tag-input", "harbour");
      await page.press("#tag-input", "Enter");
      await said(page, "#tags-status", /harbour/);
      await page.locator("#tags").screenshot({ path: join(SHOTS, `tags-${scheme}-${name}.png`) });
      if (scheme === "light" && name === "wide") {
        // A picture dropped into the text opens the dialog with its upload.
        await pictureInto(page, "drop", "dropped.jpg", 300);
        await page.locator("#picture-dialog").waitFor({ state: "visible" });
        await said(page, "#picture-status", /^Uploaded dropped\.jpg/);
        await said(page, "#picture-chosen", /^Chosen: /);
        await page.keyboard.press("Escape");
        await page.locator("#picture-dialog").waitFor({ state: "hidden" });
      }
      await page.click('[data-command="picture"]');
      await page.locator("#picture-dialog").waitFor({ state: "visible" });
      if (!(scheme === "light" && name === "wide")) {
        await page.setInputFiles("#picture-file", { name: "look.jpg", mimeType: "image/jpeg", buffer: await pictureBytes(page, 120) });
        await said(page, "#picture-chosen", /^Chosen: /);
        await page.fill("#picture-alt", "A gradient with a white circle");
        await page.screenshot({ path: join(SHOTS, `picture-dialog-${scheme}-${name}.png`) });
      }
      assert.deepEqual(await accessibilityProblems(page), [], `${scheme} ${name}: the picture dialog`);
      const wider = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      assert.equal(wider, false, `${scheme} ${name}: the page fits the screen`);
      await page.keyboard.press("Escape");
      await page.click('[data-command="link"]');
      await page.fill("#link-url", "About");
      await page.locator("#link-found button").first().waitFor();
      if (!(scheme === "light" && name === "wide")) await page.screenshot({ path: join(SHOTS, `link-dialog-${scheme}-${name}.png`) });
      assert.deepEqual(await accessibilityProblems(page), [], `${scheme} ${name}: the link dialog`);
      await page.keyboard.press("Escape");
      if (!(scheme === "light" && name === "wide")) {
        await page.click('[data-command="picture"]');
        await page.click("#picture-choices button");
        await page.fill("#picture-alt", "A gradient with a white circle");
        await page.click("#picture-insert");
        await page.locator("#picture-dialog").waitFor({ state: "hidden" });
        await page.screenshot({ path: join(SHOTS, `editor-picture-${scheme}-${name}.png`) });
      }
      assert.ok(id);
      await context.close();
    }
  }
});

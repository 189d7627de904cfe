// Browser tests of the embeddable widget (see run.sh): a made-up shop on
// another origin, with a strict CSP that allows the service only in
// script-src and frame-src, embeds /widget.js with one script tag exactly
// as a customer would.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through run.sh`);
  return value;
}

const BASE = env('SD_BASE_URL');
const API_KEY = env('SD_API_KEY');
const WIDGET_KEY = env('SD_WIDGET_KEY');
const SHOTS = process.env.SD_SCREENSHOTS ?? path.resolve('screenshots');
const WAIT = 25_000;

let browser;
let shop;
let SHOP;

function shopPage() {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Teapot Emporium</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Teapot Emporium</h1><p>Fine teapots since 1901.</p>
<p id="secret">host-only text</p>
<script src="${BASE}/widget.js" data-widget-key="${WIDGET_KEY}" data-greeting="Hello! Questions about teapots?" async></script>
</body></html>`;
}

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  // The shop: another origin (localhost, another port), the two CSP lines
  // of docs/widget.md on top of a strict default.
  shop = http.createServer((req, res) => {
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `default-src 'self'; script-src 'self' ${BASE}; frame-src ${BASE}`,
    });
    res.end(shopPage());
  });
  await new Promise((resolve) => shop.listen(0, '127.0.0.1', resolve));
  SHOP = `http://localhost:${shop.address().port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

after(async () => {
  await browser?.close();
  shop?.close();
});

async function api(method, urlPath, body) {
  const response = await fetch(`${BASE}/api/v1${urlPath}`, {
    method,
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function openShop({ width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const violations = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
  });
  await page.goto(SHOP);
  await page.locator('[data-supportdesk=launcher]').waitFor({ state: 'visible', timeout: WAIT });
  return { context, page, violations };
}

test('the shop embeds the widget: launcher, iframe, a chat to the agent and back', async () => {
  const { context, page, violations } = await openShop();
  await page.evaluate(() => {
    window.received = [];
    window.Supportdesk.on('message', (m) => window.received.push(m.body));
  });
  await page.click('[data-supportdesk=launcher]');
  const frame = page.frameLocator(`iframe[src^="${BASE}/widget/frame.html"]`);
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
  await frame.locator('#greeting').getByText('Questions about teapots').waitFor({ timeout: WAIT });
  assert.equal(await frame.locator('#composer').isVisible(), false);
  await page.screenshot({ path: path.join(SHOTS, 'widget-desktop.png') });

  await frame.locator('#name').fill('Tess');
  await frame.locator('#question').fill('Is the blue teapot dishwasher safe?');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('dishwasher safe').waitFor({ timeout: WAIT });

  // The agent side (any client of the API) sees the chat and answers.
  let session;
  for (let i = 0; i < 100 && !session; i += 1) {
    const sessions = await api('GET', '/chat/sessions?status=ACTIVE');
    session = sessions.data.find((s) => s.visitorName === 'Tess');
    const messages = session ? (await api('GET', `/chat/sessions/${session.id}`)).messages : [];
    if (!messages.some((m) => m.body.includes('dishwasher'))) session = undefined;
    if (!session) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(session, 'the chat reached the agents');
  const users = await api('GET', '/users');
  const agent = users.data[0] ?? (await api('POST', '/users', { name: 'Ann', email: 'ann@teapots.example', role: 'AGENT' }));
  await api('POST', `/chat/sessions/${session.id}/messages`, { body: 'Yes, up to 60 degrees.', senderType: 'agent', senderId: agent.id });
  await frame.locator('#messages').getByText('up to 60 degrees').waitFor({ timeout: WAIT });
  assert.equal(await frame.locator('#start').isVisible(), false);
  await page.screenshot({ path: path.join(SHOTS, 'widget-desktop-chat.png') });
  await page.waitForFunction(() => window.received.includes('Yes, up to 60 degrees.'), null, { timeout: WAIT });

  // The host cannot read the frame's document.
  const reach = await page.evaluate(() => {
    try {
      return document.querySelector('iframe').contentDocument === null ? 'null' : 'readable';
    } catch {
      return 'blocked';
    }
  });
  assert.notEqual(reach, 'readable');
  assert.deepEqual(violations, []);
  await context.close();
});

test('the JS API opens and closes; a message not from our frame is ignored', async () => {
  const { context, page } = await openShop();
  const iframe = page.locator(`iframe[src^="${BASE}/widget/frame.html"]`);
  await page.evaluate(() => {
    window.events = [];
    window.Supportdesk.on('open', () => window.events.push('open'));
    window.Supportdesk.on('close', () => window.events.push('close'));
    window.Supportdesk.open();
  });
  await iframe.waitFor({ state: 'visible', timeout: WAIT });
  // A message from the host page itself (not our origin, not our frame),
  // then a marker: messages arrive in order, so once the marker is in, the
  // loader has seen (and ignored) the forged one.
  await page.evaluate(() => new Promise((resolve) => {
    window.addEventListener('message', (e) => e.data === 'marker' && resolve());
    window.postMessage({ sd: 1, type: 'close' }, '*');
    window.postMessage('marker', '*');
  }));
  assert.equal(await iframe.isVisible(), true);
  await page.evaluate(() => window.Supportdesk.close());
  await iframe.waitFor({ state: 'hidden', timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.events), ['open', 'close']);
  await context.close();
});

test('on a phone the chat fills the screen', async () => {
  const { context, page } = await openShop({ width: 390, height: 844 });
  await page.click('[data-supportdesk=launcher]');
  const frame = page.frameLocator(`iframe[src^="${BASE}/widget/frame.html"]`);
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
  const box = await page.locator(`iframe[src^="${BASE}/widget/frame.html"]`).boundingBox();
  assert.equal(Math.round(box.width), 390);
  assert.equal(await page.locator('[data-supportdesk=launcher]').isVisible(), false);
  await frame.locator('#close').click();
  await page.locator('[data-supportdesk=launcher]').waitFor({ state: 'visible', timeout: WAIT });
  await page.click('[data-supportdesk=launcher]');
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
  await page.screenshot({ path: path.join(SHOTS, 'widget-phone.png') });
  await context.close();
});

/** An identity token as the shop's backend signs it (HS256). */
function signToken(claims, secret) {
  const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  const signature = crypto.createHmac('sha256', secret).update(signed).digest('base64url');
  return `${signed}.${signature}`;
}

test('identify() makes the next chat a verified one', async () => {
  const entityId = env('SD_ENTITY_ID');
  const { secret } = await api('POST', `/entities/${entityId}/widget-secret/rotate`, {});
  const now = Math.floor(Date.now() / 1000);
  const token = signToken({ sub: 'shop-user-7', name: 'Vera Verified', email: 'vera@teapots.example', iat: now, exp: now + 600 }, secret);
  const { context, page } = await openShop();
  await page.evaluate((t) => {
    window.Supportdesk.identify({ token: t });
    window.Supportdesk.open();
  }, token);
  const frame = page.frameLocator(`iframe[src^="${BASE}/widget/frame.html"]`);
  await frame.locator('#question').fill('Where is my order?');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('Where is my order?').waitFor({ timeout: WAIT });
  const sessions = await api('GET', '/chat/sessions');
  const session = sessions.data.find((s) => s.visitor?.externalId === 'shop-user-7');
  assert.ok(session, 'a session of the identified visitor');
  assert.deepEqual(session.visitor, { externalId: 'shop-user-7', email: 'vera@teapots.example', name: 'Vera Verified', verified: true });
  await context.close();
});

/** A 1×1 PNG: a real image, so the thumbnail loads. */
const PNG_1PX = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

test('a visitor attaches an image from the widget and the agent sees it', async () => {
  const { context, page } = await openShop();
  await page.click('[data-supportdesk=launcher]');
  const frame = page.frameLocator(`iframe[src^="${BASE}/widget/frame.html"]`);
  await frame.locator('#name').fill('Pia');
  await frame.locator('#question').fill('My teapot arrived cracked');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('arrived cracked').waitFor({ timeout: WAIT });

  await frame.locator('#file').setInputFiles({ name: 'crack.png', mimeType: 'image/png', buffer: PNG_1PX });
  await frame.locator('#pending').getByText('crack.png').waitFor({ timeout: WAIT });
  await frame.locator('#input').fill('Here is a photo');
  await frame.locator('#composer button[type=submit]').click();
  // The widget shows its own message with the thumbnail, loaded through the signed link.
  const thumb = frame.locator('#messages img.thumb[alt="crack.png"]');
  await thumb.waitFor({ timeout: WAIT });
  await frame.locator('#messages img.thumb[alt="crack.png"]').evaluate((img) =>
    img.complete && img.naturalWidth > 0 ? null : new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error('the thumbnail did not load'));
    }));
  await page.screenshot({ path: path.join(SHOTS, 'widget-attachment.png') });

  // The agent side sees the message with the image, and its link serves the bytes.
  let file;
  for (let i = 0; i < 100 && !file; i += 1) {
    const sessions = await api('GET', '/chat/sessions?status=ACTIVE');
    const session = sessions.data.find((s) => s.visitorName === 'Pia');
    const messages = session ? (await api('GET', `/chat/sessions/${session.id}`)).messages : [];
    file = messages.find((m) => m.body === 'Here is a photo')?.attachments?.[0];
    if (!file) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(file, 'the message with its file reached the agents');
  assert.equal(file.filename, 'crack.png');
  assert.equal(file.contentType, 'image/png');
  const download = await fetch(file.url);
  assert.equal(download.status, 200);
  assert.deepEqual(Buffer.from(await download.arrayBuffer()), PNG_1PX);
  await context.close();
});

// Browser tests of the embeddable widget (see run.sh): the demo's made-up
// shop, served by the service on its own port (another origin than the
// API) under a CSP that allows the API only in script-src and frame-src,
// embeds /widget.js with one script tag exactly as a customer would.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { env, BASE, SHOTS, WAIT, agentAccount, api, launchChromium, signInConsole } from './support.js';

const SHOP = env('SD_SHOP_URL');
const FRAME = `iframe[src^="${BASE}/widget/frame.html"]`;

let browser;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

async function openShop({ width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const violations = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
  });
  await page.goto(`${SHOP}/`);
  await page.locator('[data-supportdesk=launcher]').waitFor({ state: 'visible', timeout: WAIT });
  return { context, page, violations };
}

/** The agent console in its own context, signed in with a password and online. */
async function signInAgent(name, email) {
  await agentAccount({ name, email });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signInConsole(page, { email });
  return { context, page };
}

/** Closes a console, and makes sure its agent no longer shows as online. */
async function leaveConsole(agent, name) {
  await agent.page.close({ runBeforeUnload: true });
  await agent.context.close();
  const online = await api('GET', '/chat/agent-presence');
  for (const a of online.data.filter((a) => a.name === name)) {
    await api('DELETE', `/chat/agent-presence/${a.userId}`).catch(() => {});
  }
}

test('the shop embeds the widget: launcher, iframe, a chat to the agent console and back', async () => {
  const agent = await signInAgent('Otto Agent', 'otto@teapots.example');
  const { context, page, violations } = await openShop();
  try {
    // The loader came from the API's origin into a page of another origin.
    assert.notEqual(new URL(SHOP).origin, new URL(BASE).origin);
    await page.evaluate(() => {
      window.received = [];
      window.Supportdesk.on('message', (m) => window.received.push(m.body));
    });
    await page.click('[data-supportdesk=launcher]');
    const frame = page.frameLocator(FRAME);
    await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
    await frame.locator('#greeting').getByText('Questions about teapots').waitFor({ timeout: WAIT });
    assert.equal(await frame.locator('#composer').isVisible(), false);
    await page.screenshot({ path: path.join(SHOTS, 'widget-desktop.png') });

    await frame.locator('#name').fill('Tess');
    await frame.locator('#question').fill('Is the blue teapot dishwasher safe?');
    await frame.locator('#start button[type=submit]').click();
    await frame.locator('#messages').getByText('dishwasher safe').waitFor({ timeout: WAIT });

    // The agent sees the chat live in the console and answers from there.
    const item = agent.page.locator('#session-list .session', { hasText: 'Tess' });
    await item.first().waitFor({ state: 'visible', timeout: WAIT });
    await item.first().click();
    await agent.page.locator('#messages .msg-visitor', { hasText: 'dishwasher safe' }).waitFor({ timeout: WAIT });
    await agent.page.fill('#reply', 'Yes, up to 60 degrees.');
    await agent.page.press('#reply', 'Enter');

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
  } finally {
    await context.close();
    await leaveConsole(agent, 'Otto Agent');
  }
});

test('the JS API opens and closes; a message not from our frame is ignored', async () => {
  const { context, page } = await openShop();
  const iframe = page.locator(FRAME);
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
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        window.addEventListener('message', (e) => e.data === 'marker' && resolve());
        window.postMessage({ sd: 1, type: 'close' }, '*');
        window.postMessage('marker', '*');
      }),
  );
  assert.equal(await iframe.isVisible(), true);
  await page.evaluate(() => window.Supportdesk.close());
  await iframe.waitFor({ state: 'hidden', timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.events), ['open', 'close']);
  await context.close();
});

test('on a phone the chat fills the screen', async () => {
  const { context, page } = await openShop({ width: 390, height: 844 });
  await page.click('[data-supportdesk=launcher]');
  const frame = page.frameLocator(FRAME);
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
  const box = await page.locator(FRAME).boundingBox();
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
  const frame = page.frameLocator(FRAME);
  await frame.locator('#question').fill('Where is my order?');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('Where is my order?').waitFor({ timeout: WAIT });
  const sessions = await api('GET', '/chat/sessions');
  const session = sessions.data.find((s) => s.visitor?.externalId === 'shop-user-7');
  assert.ok(session, 'a session of the identified visitor');
  assert.deepEqual(session.visitor, { externalId: 'shop-user-7', email: 'vera@teapots.example', name: 'Vera Verified', verified: true });
  await context.close();
});

test('when the agent closes the chat the widget asks for a rating and sends it', async () => {
  const { context, page } = await openShop();
  await page.click('[data-supportdesk=launcher]');
  const frame = page.frameLocator(`iframe[src^="${BASE}/widget/frame.html"]`);
  await frame.locator('#name').fill('Rita');
  await frame.locator('#question').fill('Do you ship teapots abroad?');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('ship teapots abroad').waitFor({ timeout: WAIT });

  let session;
  for (let i = 0; i < 100 && !session; i += 1) {
    const sessions = await api('GET', '/chat/sessions?status=ACTIVE');
    session = sessions.data.find((s) => s.visitorName === 'Rita');
    if (!session) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(session, 'the chat reached the agents');
  await api('PATCH', `/chat/sessions/${session.id}`, { status: 'CLOSED' });

  // The entity asks automatically (the default): the card appears.
  await frame.locator('#rating').waitFor({ state: 'visible', timeout: WAIT });
  await frame.locator('#rating .stars button[data-score="4"]').click();
  await frame.locator('#rating-comment').fill('Quick and clear.');
  await page.screenshot({ path: path.join(SHOTS, 'widget-rating.png') });
  await frame.locator('#rating button[type=submit]').click();
  await frame
    .locator('#rating')
    .getByText(/thank you/i)
    .waitFor({ timeout: WAIT });

  const ratings = await api('GET', `/ratings?entityId=${env('SD_ENTITY_ID')}`);
  const rating = ratings.data.find((r) => r.chatSessionId === session.id);
  assert.ok(rating, 'the rating was stored');
  assert.equal(rating.score, 4);
  assert.equal(rating.comment, 'Quick and clear.');
  await context.close();
});

test('an open chat trades its visitor token for a fresh one before it expires', async () => {
  const { context, page } = await openShop();
  // The page's own clock, moved on below: the widget's timers fire as if
  // the visitor had kept the chat open for a quarter of an hour.
  await context.clock.install();
  await page.reload();
  await page.locator('[data-supportdesk=launcher]').waitFor({ state: 'visible', timeout: WAIT });
  try {
    await page.click('[data-supportdesk=launcher]');
    const frame = page.frameLocator(FRAME);
    await frame.locator('#name').fill('Frida');
    await frame.locator('#question').fill('Is the green teapot in stock?');
    await frame.locator('#start button[type=submit]').click();
    await frame.locator('#messages').getByText('green teapot').waitFor({ timeout: WAIT });
    const chatFrame = page.frames().find((f) => f.url().startsWith(`${BASE}/widget/frame.html`));
    const stored = () => chatFrame.evaluate(() => JSON.parse(Object.values({ ...localStorage })[0] ?? 'null'));
    const before = await stored();

    // Half of the 30-minute lifetime has passed: the widget trades its
    // token for a fresh one (the same text when minted within the same
    // second on the server, whose clock has not moved) and keeps it.
    const refreshed = page.waitForResponse((r) => r.url().endsWith('/widget/v1/tokens/refresh'), { timeout: WAIT });
    await context.clock.fastForward('16:00');
    const response = await refreshed;
    assert.equal(response.status(), 200);
    assert.equal(response.request().headers().authorization, `Bearer ${before.token}`);
    const fresh = await response.json();
    assert.equal(fresh.sessionId, before.sessionId);
    // Polled from here: the page's own timers run on the installed clock.
    let after = await stored();
    for (const deadline = Date.now() + WAIT; after.expiresAt !== fresh.visitorTokenExpiresAt && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await stored();
    }
    assert.equal(after.token, fresh.visitorToken);
    assert.equal(after.expiresAt, fresh.visitorTokenExpiresAt);
  } finally {
    await context.close();
  }
});

test("signing in on the shop verifies the visitor, who sees the same customer's chats in another browser", async () => {
  // First device: sign in, then chat.
  const first = await openShop();
  await first.page.click('#sign-in');
  await first.page.locator('#account').getByText('Signed in as Dana Demo').waitFor({ timeout: WAIT });
  await first.page.click('[data-supportdesk=launcher]');
  const frameA = first.page.frameLocator(FRAME);
  await frameA.locator('#question').fill('Has order 1234 shipped?');
  await frameA.locator('#start button[type=submit]').click();
  await frameA.locator('#messages').getByText('order 1234').waitFor({ timeout: WAIT });
  await first.context.close();

  // Second device: sign in, reload (the page identifies at once, before
  // the widget's frame is ready: the call must not be lost), then chat.
  const second = await openShop({ width: 1280, height: 800 });
  await second.page.click('#sign-in');
  await second.page.locator('#account').getByText('Signed in as Dana Demo').waitFor({ timeout: WAIT });
  await second.page.reload();
  await second.page.locator('[data-supportdesk=launcher]').waitFor({ state: 'visible', timeout: WAIT });
  await second.page.click('[data-supportdesk=launcher]');
  const frameB = second.page.frameLocator(FRAME);
  await frameB.locator('#question').fill('And order 5678?');
  await frameB.locator('#start button[type=submit]').click();
  await frameB.locator('#messages li.earlier').getByText('order 1234').waitFor({ timeout: WAIT });
  await frameB.locator('#messages').getByText('order 5678').waitFor({ timeout: WAIT });

  const sessions = await api('GET', '/chat/sessions');
  const mine = sessions.data.filter((s) => s.visitor?.externalId === 'demo-customer-1');
  assert.equal(mine.length, 2);
  assert.ok(mine.every((s) => s.visitor.verified === true));

  // The new chat is live although earlier chats are shown above it: an
  // agent's reply to it arrives.
  let current;
  for (let i = 0; i < 100 && !current; i += 1) {
    for (const s of mine) {
      const { messages } = await api('GET', `/chat/sessions/${s.id}`);
      if (messages.some((m) => m.body.includes('order 5678'))) current = s;
    }
    if (!current) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(current, 'the second chat reached the agents');
  const users = await api('GET', '/users');
  const agent = users.data[0] ?? (await api('POST', '/users', { name: 'Ann', email: 'ann@teapots.example', role: 'AGENT' }));
  await api('POST', `/chat/sessions/${current.id}/messages`, { body: 'Both shipped today.', senderType: 'agent', senderId: agent.id });
  await frameB.locator('#messages').getByText('Both shipped today.').waitFor({ timeout: WAIT });
  await second.page.screenshot({ path: path.join(SHOTS, 'widget-verified-history.png') });
  assert.deepEqual(second.violations, []);
  await second.context.close();
});

test('calls a page pushed before the loader ran are replayed: open, then a verified chat', async () => {
  const entityId = env('SD_ENTITY_ID');
  const { secret } = await api('POST', `/entities/${entityId}/widget-secret/rotate`, {});
  const now = Math.floor(Date.now() / 1000);
  const token = signToken({ sub: 'shop-user-early', name: 'Erin Early', email: 'erin@teapots.example', iat: now, exp: now + 600 }, secret);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // The stub of the docs, in place before any script of the page runs.
  await page.addInitScript((t) => {
    window.Supportdesk = window.Supportdesk || [];
    window.Supportdesk.push(['identify', { token: t }], ['open']);
  }, token);
  await page.goto(`${SHOP}/`);
  const frame = page.frameLocator(FRAME);
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
  await frame.locator('#question').fill('Do you ship to Norway?');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('ship to Norway').waitFor({ timeout: WAIT });
  const sessions = await api('GET', '/chat/sessions');
  const session = sessions.data.find((s) => s.visitor?.externalId === 'shop-user-early');
  assert.ok(session, 'a session of the identified visitor');
  assert.equal(session.visitor.verified, true);
  await context.close();
});

test('the chat frame ignores a postMessage from a frame of another origin', async () => {
  const entityId = env('SD_ENTITY_ID');
  const { secret } = await api('POST', `/entities/${entityId}/widget-secret/rotate`, {});
  const now = Math.floor(Date.now() / 1000);
  const token = signToken({ sub: 'forged-user', name: 'Mallory', email: 'mallory@teapots.example', iat: now, exp: now + 600 }, secret);
  const { context, page } = await openShop();
  await page.click('[data-supportdesk=launcher]');
  const frame = page.frameLocator(FRAME);
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
  // A frame of another origin than the shop (allowed by the shop's
  // frame-src) posts a valid identity to the chat frame, its sibling.
  await page.evaluate(
    (src) =>
      new Promise((resolve) => {
        const other = document.createElement('iframe');
        other.src = src;
        other.id = 'foreign';
        other.onload = resolve;
        document.body.append(other);
      }),
    `${BASE}/healthz`,
  );
  const foreign = page.frames().find((f) => f.url() === `${BASE}/healthz`);
  assert.ok(foreign, 'the foreign frame');
  await foreign.evaluate(
    ([t, origin]) => {
      window.parent.frames[0].postMessage({ sd: 1, type: 'identify', token: t }, origin);
    },
    [token, BASE],
  );
  await frame.locator('#name').fill('Not Mallory');
  await frame.locator('#question').fill('Who am I?');
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText('Who am I?').waitFor({ timeout: WAIT });
  const sessions = await api('GET', '/chat/sessions');
  assert.equal(
    sessions.data.some((s) => s.visitor?.externalId === 'forged-user'),
    false,
  );
  const mine = sessions.data.find((s) => s.visitorName === 'Not Mallory');
  assert.ok(mine, 'the chat started');
  assert.notEqual(mine.visitor?.verified, true);
  await context.close();
});

/** A 1×1 PNG: a real image, so the thumbnail loads. */
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

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
    img.complete && img.naturalWidth > 0
      ? null
      : new Promise((resolve, reject) => {
          img.onload = resolve;
          img.onerror = () => reject(new Error('the thumbnail did not load'));
        }),
  );
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

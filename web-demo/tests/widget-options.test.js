// Browser tests of the widget's options and of the host-page JS API beyond
// open/identify/on("message") (those are in widget.test.js). The demo shop
// (another origin, see run.sh) embeds the loader; a test that needs other
// options sets `window.SupportdeskSettings` before any script of the page
// runs, as a customer's page would, or sets `data-` attributes on the
// shop's script tag as the page is parsed.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { env, BASE, WAIT, api, launchChromium } from './support.js';

const SHOP = env('SD_SHOP_URL');
const FRAME = `iframe[src^="${BASE}/widget/frame.html"]`;
const LAUNCHER = '[data-supportdesk=launcher]';

let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * The shop with the widget loaded: `settings` become the page's
 * `window.SupportdeskSettings`, `attributes` ({name: value}) are set on
 * the script tag.
 */
async function openShop({ settings, attributes, locale, width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, ...(locale ? { locale } : {}) });
  const page = await context.newPage();
  if (settings) {
    await page.addInitScript((s) => {
      window.SupportdeskSettings = s;
    }, settings);
  }
  if (attributes) {
    // Onto the widget's tag as the parser adds it: an async script runs no
    // sooner than a later task, after this observer's microtask.
    // (Rewriting the HTML through page.route would not do: Chromium then
    // treats the page as public and blocks its request to the loopback API.)
    await page.addInitScript((attrs) => {
      new MutationObserver((records, observer) => {
        for (const node of records.flatMap((r) => [...r.addedNodes])) {
          if (node.nodeName === 'SCRIPT' && node.hasAttribute('data-widget-key')) {
            for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
            observer.disconnect();
          }
        }
      }).observe(document, { childList: true, subtree: true });
    }, attributes);
  }
  await page.goto(`${SHOP}/`);
  // Built, visible or not (hideLauncher).
  await page.locator(LAUNCHER).waitFor({ state: 'attached', timeout: WAIT });
  return { context, page, frame: page.frameLocator(FRAME) };
}

/** The frame's start form is up: the frame has loaded its texts and said ready. */
async function frameReady(frame) {
  await frame.locator('#question').waitFor({ state: 'visible', timeout: WAIT });
}

const backgroundOf = (locator) => locator.evaluate((node) => getComputedStyle(node).backgroundColor);

/** Starts a chat from the open widget and returns its session, as the agents see it. */
async function startChat(frame, visitorName, question) {
  await frame.locator('#name').fill(visitorName);
  await frame.locator('#question').fill(question);
  await frame.locator('#start button[type=submit]').click();
  await frame.locator('#messages').getByText(question).waitFor({ timeout: WAIT });
  const sessions = await api('GET', '/chat/sessions');
  const session = sessions.data.find((s) => s.visitorName === visitorName);
  assert.ok(session, `the chat of ${visitorName} reached the agents`);
  return session;
}

async function agentReplies(sessionId, body) {
  const users = await api('GET', '/users');
  const agent = users.data[0] ?? (await api('POST', '/users', { name: 'Olga', email: 'olga@teapots.example', role: 'AGENT' }));
  await api('POST', `/chat/sessions/${sessionId}/messages`, { body, senderType: 'agent', senderId: agent.id });
}

test('position "left" puts the launcher and the chat on the left', async () => {
  const { context, page, frame } = await openShop({ settings: { position: 'left' } });
  const launcher = await page.locator(LAUNCHER).boundingBox();
  assert.equal(launcher.x, 20);
  await page.click(LAUNCHER);
  await frameReady(frame);
  const chat = await page.locator(FRAME).boundingBox();
  assert.equal(chat.x, 20);
  await context.close();
});

test('data-position="left" on the script tag puts the launcher on the left', async () => {
  const { context, page } = await openShop({ attributes: { 'data-position': 'left' } });
  const launcher = await page.locator(LAUNCHER).boundingBox();
  assert.equal(launcher.x, 20);
  await context.close();
});

test("window.SupportdeskSettings wins over the script tag's data- attributes", async () => {
  const { context, page } = await openShop({ settings: { position: 'right' }, attributes: { 'data-position': 'left' } });
  const launcher = await page.locator(LAUNCHER).boundingBox();
  // 1280 wide, 60 wide, 20 from the right edge.
  assert.equal(launcher.x, 1200);
  await context.close();
});

test("a colour setting paints the launcher and the chat's header", async () => {
  const { context, page, frame } = await openShop({ settings: { colour: '#7c3aed' } });
  assert.equal(await backgroundOf(page.locator(LAUNCHER)), 'rgb(124, 58, 237)');
  await page.click(LAUNCHER);
  await frameReady(frame);
  assert.equal(await backgroundOf(frame.locator('.head')), 'rgb(124, 58, 237)');
  await context.close();
});

test('data-colour on the script tag paints the launcher', async () => {
  const { context, page } = await openShop({ attributes: { 'data-colour': '#b91c1c' } });
  assert.equal(await backgroundOf(page.locator(LAUNCHER)), 'rgb(185, 28, 28)');
  await context.close();
});

test('a colour that is not a hex colour is ignored: the default colour stays', async () => {
  const { context, page } = await openShop({ settings: { colour: 'red; background-image: url(x)' } });
  // #0f766e, the documented default.
  assert.equal(await backgroundOf(page.locator(LAUNCHER)), 'rgb(15, 118, 110)');
  await context.close();
});

test('locale "fr" shows the chat in French', async () => {
  const { context, page, frame } = await openShop({ settings: { locale: 'fr' } });
  await page.click(LAUNCHER);
  await frameReady(frame);
  assert.equal(await frame.locator('#start button[type=submit]').textContent(), 'Démarrer la discussion');
  await context.close();
});

test('locale "fr" labels the launcher in French', async () => {
  const { context, page } = await openShop({ settings: { locale: 'fr' } });
  assert.equal(await page.locator(LAUNCHER).getAttribute('aria-label'), 'Ouvrir la discussion avec le support');
  await context.close();
});

test('without a locale setting a French browser gets the chat in French', async () => {
  const { context, page, frame } = await openShop({ locale: 'fr-FR' });
  await page.click(LAUNCHER);
  await frameReady(frame);
  assert.equal(await frame.locator('#start button[type=submit]').textContent(), 'Démarrer la discussion');
  await context.close();
});

test('hideLauncher shows no launcher, and Supportdesk.open() still opens the chat', async () => {
  const { context, page, frame } = await openShop({ settings: { hideLauncher: true } });
  assert.equal(await page.locator(LAUNCHER).isVisible(), false);
  await page.evaluate(() => window.Supportdesk.open());
  await frameReady(frame);
  await context.close();
});

test('with hideLauncher, closing the chat from its close button brings no launcher back', async () => {
  const { context, page, frame } = await openShop({ settings: { hideLauncher: true } });
  await page.evaluate(() => window.Supportdesk.open());
  await frameReady(frame);
  await frame.locator('#close').click();
  await page.locator(FRAME).waitFor({ state: 'hidden', timeout: WAIT });
  assert.equal(await page.locator(LAUNCHER).isVisible(), false);
  await context.close();
});

test('data-hide-launcher on the script tag shows no launcher', async () => {
  const { context, page } = await openShop({ attributes: { 'data-hide-launcher': '' } });
  assert.equal(await page.locator(LAUNCHER).isVisible(), false);
  await context.close();
});

test('on("close") fires when the visitor closes the chat with its own close button', async () => {
  const { context, page, frame } = await openShop();
  await page.evaluate(() => {
    window.closes = 0;
    window.Supportdesk.on('close', () => {
      window.closes += 1;
    });
  });
  await page.click(LAUNCHER);
  await frameReady(frame);
  await frame.locator('#close').click();
  await page.waitForFunction(() => window.closes > 0, null, { timeout: WAIT });
  assert.equal(await page.evaluate(() => window.closes), 1);
  await context.close();
});

test('on("unread") counts agent messages that arrive while the chat is closed', async () => {
  const { context, page, frame } = await openShop();
  await page.click(LAUNCHER);
  await frameReady(frame);
  const session = await startChat(frame, 'Ursula Unread', 'Is the jade teapot in stock?');
  await page.evaluate(() => {
    window.unread = [];
    window.Supportdesk.on('unread', (u) => window.unread.push(u.count));
    window.Supportdesk.close();
  });
  await agentReplies(session.id, 'Yes, three left.');
  await page.waitForFunction(() => window.unread.length === 1, null, { timeout: WAIT });
  await agentReplies(session.id, 'Shall I reserve one?');
  await page.waitForFunction(() => window.unread.length === 2, null, { timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.unread), [1, 2]);
  await context.close();
});

test('the launcher shows how many agent messages are unread', async () => {
  const { context, page, frame } = await openShop();
  await page.click(LAUNCHER);
  await frameReady(frame);
  const session = await startChat(frame, 'Bea Badge', 'Do you sell teapot warmers?');
  await page.click(LAUNCHER);
  await page.locator(FRAME).waitFor({ state: 'hidden', timeout: WAIT });
  await agentReplies(session.id, 'We do, from €12.');
  await page.locator(LAUNCHER).getByText('1', { exact: true }).waitFor({ timeout: WAIT });
  await context.close();
});

test('on("unread") does not fire for a message the visitor sees in the open chat', async () => {
  const { context, page, frame } = await openShop();
  await page.click(LAUNCHER);
  await frameReady(frame);
  const session = await startChat(frame, 'Otis Open', 'Is the cast iron one enamelled?');
  await page.evaluate(() => {
    window.events = [];
    window.Supportdesk.on('unread', () => window.events.push('unread'));
    window.Supportdesk.on('message', () => window.events.push('message'));
  });
  await agentReplies(session.id, 'Inside, yes.');
  // The loader emits "unread" (if at all) right after "message", in the
  // same task: once "message" is in, the decision has been made.
  await page.waitForFunction(() => window.events.includes('message'), null, { timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.events), ['message']);
  await context.close();
});

test('setCustomFields() fills visitor-writable custom fields of the next chat', async () => {
  await api('POST', '/settings/custom-fields', {
    key: 'shop_cart_id',
    label: 'Cart',
    type: 'text',
    appliesTo: ['chat'],
    visitorWritable: true,
  });
  const { context, page, frame } = await openShop();
  await page.evaluate(() => window.Supportdesk.setCustomFields({ shop_cart_id: 'cart-42' }));
  await page.click(LAUNCHER);
  await frameReady(frame);
  const session = await startChat(frame, 'Carl Cart', 'Can I change my cart?');
  const stored = await api('GET', `/chat/sessions/${session.id}`);
  assert.deepEqual(stored.customFields, { shop_cart_id: 'cart-42' });
  await context.close();
});

test('setCustomFields() with a field agents only may set: the chat starts without it and the console warns', async () => {
  await api('POST', '/settings/custom-fields', {
    key: 'shop_agent_note',
    label: 'Agent note',
    type: 'text',
    appliesTo: ['chat'],
  });
  const { context, page, frame } = await openShop();
  const warnings = [];
  page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  await page.evaluate(() => window.Supportdesk.setCustomFields({ shop_agent_note: 'VIP' }));
  await page.click(LAUNCHER);
  await frameReady(frame);
  const session = await startChat(frame, 'Nina Note', 'Anything for me?');
  const stored = await api('GET', `/chat/sessions/${session.id}`);
  assert.deepEqual(stored.customFields, {});
  assert.ok(
    warnings.some((w) => w.includes('shop_agent_note')),
    warnings.join('\n'),
  );
  await context.close();
});

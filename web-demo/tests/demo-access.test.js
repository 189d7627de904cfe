// Browser tests of the ways into the web demo (see run.sh; helpers in
// demo-support.js): a chat continued from the link in an email on another
// device, the widget with the keyboard alone, the demo page leading to the
// shop and the agent console, which refuses LIVE keys.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BASE, WIDGET_KEY, WAIT, api, shot } from './support.js';
import { textIn, visible, openVisitor, assertNoApiKey, agentUser, newContext, useBrowser } from './demo-support.js';

useBrowser();

const MAIL_DIR = process.env.SD_MAIL_DIR;

const CHAT_LINK = /https?:\/\/\S+\/widget\/frame\.html#session=[0-9a-f-]+&link=vl_[A-Za-z0-9_-]+/;

/** The newest link like `pattern` emailed to `to` (quoted-printable decoded). */
async function emailedLink(to, pattern = CHAT_LINK) {
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    const files = (await fs.readdir(MAIL_DIR).catch(() => [])).filter((f) => f.endsWith('.eml'));
    for (const file of files.sort().reverse()) {
      const raw = await fs.readFile(path.join(MAIL_DIR, file), 'utf8');
      if (!raw.includes(to)) continue;
      const decoded = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
      const link = decoded.match(pattern);
      if (link) return link[0];
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no email with a link like ${pattern} to ${to} in ${MAIL_DIR}`);
}

test('a visitor continues the chat from the link in the agent-message email, on another device', async () => {
  // A chat started with an email address, answered by an agent.
  const started = await fetch(`${BASE}/widget/v1/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ widgetKey: WIDGET_KEY, visitorName: 'Mia Mobile', visitorEmail: 'mia@example.com' }),
  }).then((r) => r.json());
  // A typed address is unproven: replies are mailed once its owner opens
  // the confirmation link.
  const confirm = await emailedLink('mia@example.com', /https?:\/\/\S+\/widget\/v1\/confirm-email\?token=[A-Za-z0-9_]+/);
  assert.equal((await fetch(confirm)).status, 200);
  const sam = await agentUser('Sam Support', 'sam@northwind.test');
  await api('POST', `/chat/sessions/${started.id}/messages`, {
    body: 'Your refund was approved. Anything else?',
    senderType: 'agent',
    senderId: sam.id,
  });
  const link = await emailedLink('mia@example.com');
  // The service's own chat page (it exists without the demo), with a
  // one-time link token, never a visitor token.
  assert.ok(link.startsWith(`${BASE}/widget/frame.html#session=${started.id}&link=vl_`), link);

  // A phone with nothing stored opens the link: the chat opens with the
  // conversation, and the link leaves the address bar.
  const visitor = await openVisitor(link, { width: 390, height: 844 });
  const { page } = visitor;
  try {
    await visible(page.locator('#messages li.agent', { hasText: 'Your refund was approved.' }));
    await textIn(page, '#messages', 'Sam Support');
    assert.ok(!page.url().includes('link='), `the link left the address bar: ${page.url()}`);
    await page.fill('#input', 'No, that is all. Thanks!');
    await page.click('#composer button[type="submit"]');
    await visible(page.locator('#messages li.visitor', { hasText: 'No, that is all.' }));
    const stored = await api('GET', `/chat/sessions/${started.id}`);
    assert.equal(stored.messages.at(-1).body, 'No, that is all. Thanks!');
    assert.equal(stored.messages.at(-1).senderType, 'visitor');
    await shot(page, 'visitor-6-mobile-from-email');
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
  }

  // The link worked once: opened again elsewhere, it opens no chat.
  const again = await openVisitor(link);
  try {
    await textIn(again.page, '#note', 'already used');
    assert.equal(await again.page.locator('#messages li.agent').count(), 0);
  } finally {
    await again.context.close();
  }
});

test('the widget works with the keyboard alone', async () => {
  const visitor = await openVisitor(`widgetKey=${WIDGET_KEY}`);
  const { page } = visitor;
  const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
  try {
    // The first Tab reaches the skip link, which leads to the launcher.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    assert.equal(await focused(), 'sd-launcher');
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('#sd-launcher', 'aria-expanded'), 'true');
    assert.equal(await focused(), 'sd-question', 'focus moves into the panel');
    await page.keyboard.type('Where can I download my invoices?');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'sd-name');
    await page.keyboard.type('Kim Keys');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'sd-start');
    await page.keyboard.press('Enter');
    await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: 'download my invoices' }));
    assert.equal(await focused(), 'sd-input', 'the composer takes the focus');
    await page.keyboard.type('Thanks in advance');
    await page.keyboard.press('Enter');
    await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: 'Thanks in advance' }));
    // Escape closes the panel and gives the focus back to the launcher.
    await page.keyboard.press('Escape');
    assert.equal(await page.isVisible('#sd-panel'), false);
    assert.equal(await focused(), 'sd-launcher');
    assert.match(page.url(), /#widgetKey=/, 'the address still names the widget key');
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
  }
});

test('the demo leads to the shop, which links the agent console; the console asks for an email and password', async () => {
  const context = await newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  try {
    await page.goto(`${BASE}/demo/`);
    await visible(page.locator(`a[href="${BASE}/app/"]`));
    await page.click(`a[href="${BASE}/app/"]`);
    await visible(page.locator('#login-form'));
    assert.equal(await page.locator('#api-key').count(), 0, 'no API key field');

    await page.fill('#login-email', 'nobody@northwind.test');
    await page.fill('#login-password', 'not-the-password');
    await page.click('#login-submit');
    await textIn(page, '#login-error', 'do not match an account');
    await shot(page, 'agent-0-sign-in');
  } finally {
    await context.close();
  }
});

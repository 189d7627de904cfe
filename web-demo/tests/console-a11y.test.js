// Browser tests of the console's accessibility (see run.sh): axe-core audits
// every screen of the console at /app/ — the sign-in and its second-factor
// and SSO steps, the pages of an invitation link and a reset link, the Chats view with a conversation open, the Tickets view
// with a ticket open, each dialog (search, shortcuts, a contact's peek, new
// ticket, escalate, ticket from a chat), and the main views 390 px wide —
// and each test fails on any serious or critical violation, named with the
// elements it found it on.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import {
  BASE,
  ENTITY_ID,
  PASSWORD,
  SHOTS,
  WAIT,
  agentAccount,
  agentsOffline,
  api,
  apiSession,
  launchChromium,
  shot,
  signInConsole,
  totpCode,
} from './support.js';

const axeSource = createRequire(import.meta.url)('axe-core').source;

/** What a violation must not be: axe's two worst impacts. */
const BLOCKING = new Set(['serious', 'critical']);

let browser;
let agent;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
  agent = await agentAccount({ name: 'Alex Audit', email: 'alex@a11y.northwind.test' });
});

after(async () => {
  await browser?.close();
  await agentsOffline();
});

/** A page of its own, `width` wide. */
async function newPage(width = 1440) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  return context.newPage();
}

/** A console signed in as the audit's agent. */
async function consolePage(width = 1440) {
  const page = await newPage(width);
  await signInConsole(page, { email: agent.email });
  return page;
}

/**
 * Runs axe-core over the page as it stands and asserts that it found no
 * serious or critical violation; a screenshot of the screen audited lands
 * beside the others. (axe goes in through the DevTools protocol, which the
 * page's Content-Security-Policy does not govern.)
 */
async function audit(page, screen) {
  await shot(page, `a11y-${screen}`);
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const { violations } = await window.axe.run(document, { resultTypes: ['violations'] });
    return violations.map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      targets: nodes.map((node) => node.target.join(' ')),
    }));
  });
  assert.deepEqual(
    violations.filter((v) => BLOCKING.has(v.impact)),
    [],
    `${screen}: serious or critical accessibility violations`,
  );
}

/** A chat of a visitor, opened in the Chats view. */
async function openChat(page, visitorName) {
  await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName });
  const item = page.locator('#session-list .session', { hasText: visitorName });
  await item.waitFor({ state: 'visible', timeout: WAIT });
  await item.click();
  await page.locator('#thread').waitFor({ state: 'visible', timeout: WAIT });
}

/** A ticket with a comment (or `existing`), opened on the ticket page of the Tickets view. */
async function openTicket(page, subject, { existing } = {}) {
  const ticket =
    existing ??
    (await api('POST', '/tickets', {
      subject,
      description: 'The parcel never came.',
      priority: 'HIGH',
      tags: ['parcel', 'late'],
      entityId: ENTITY_ID,
    }));
  if (!existing)
    await api('POST', `/tickets/${ticket.id}/comments`, { body: 'Checked with the carrier: it is on its way.', isInternal: true });
  await page.click('#view-tickets');
  await page.fill('#tf-q', subject);
  const item = page.locator('#ticket-list .ticket-item', { hasText: subject });
  await item.waitFor({ state: 'visible', timeout: WAIT });
  await item.click();
  await page.waitForFunction((text) => document.querySelector('#td-subject')?.textContent === text, subject, { timeout: WAIT });
  return ticket;
}

test('the sign-in page has no serious or critical accessibility violation', async () => {
  const page = await newPage();
  await page.goto(`${BASE}/app/`);
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'sign-in');
});

test('the sign-in with a wrong password (its error shown) has none', async () => {
  const page = await newPage();
  await page.goto(`${BASE}/app/`);
  await page.fill('#login-email', agent.email);
  await page.fill('#login-password', 'not-the-password');
  await page.click('#login-submit');
  await page.locator('#login-error').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'sign-in-error');
});

test('the second-factor step of the sign-in has none', async () => {
  const tess = await agentAccount({ name: 'Tess Totp', email: 'tess@a11y.northwind.test' });
  const session = await apiSession(tess.email);
  const { secret } = await session.call('POST', '/auth/totp/setup');
  await session.call('POST', '/auth/totp/confirm', { code: totpCode(secret, Date.now() / 1000) });
  const page = await newPage();
  await page.goto(`${BASE}/app/`);
  await page.fill('#login-email', tess.email);
  await page.fill('#login-password', PASSWORD);
  await page.click('#login-submit');
  await page.locator('#totp-form').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'sign-in-totp');
});

test('the SSO step of the sign-in has none', async () => {
  const page = await newPage();
  await page.goto(`${BASE}/app/`);
  await page.click('#sso-show');
  await page.locator('#sso-form').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'sign-in-sso');
});

test("an invitation link's page, with the API's answer to a used link shown, has none", async () => {
  const page = await newPage();
  await page.goto(`${BASE}/app/accept-invitation#token=used-or-unknown`);
  await page.locator('#link-form').waitFor({ state: 'visible', timeout: WAIT });
  await page.fill('#link-password', 'a-new-password-123');
  await page.fill('#link-repeat', 'a-new-password-123');
  await page.click('#link-submit');
  await page.locator('#link-error').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'accept-invitation');
});

test("a reset link's page has none", async () => {
  const page = await newPage();
  await page.goto(`${BASE}/app/reset-password#token=unknown`);
  await page.locator('#link-form').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'reset-password');
});

test('the Chats view with a conversation open and one assigned has none', async () => {
  const page = await consolePage();
  const assigned = await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName: 'Ada Assigned' });
  await api('PATCH', `/chat/sessions/${assigned.id}`, { assigneeId: agent.id });
  await page.locator('#assigned-list .assigned-item').first().waitFor({ state: 'visible', timeout: WAIT });
  await openChat(page, 'Ola Audit');
  await page.fill('#reply', 'Hello! How can I help?');
  await page.press('#reply', 'Enter');
  await page.locator('#messages .msg', { hasText: 'How can I help' }).first().waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'chats');
});

test('the dialog making a ticket of a chat has none', async () => {
  const page = await consolePage();
  await openChat(page, 'Tim Ticketed');
  await page.click('#make-ticket');
  await page.locator('#ticket-dialog').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'chat-ticket-dialog');
});

test('the Tickets view with a ticket open has none', async () => {
  const page = await consolePage();
  await openTicket(page, `Audit parcel ${Date.now()}`);
  await audit(page, 'tickets');
});

test('a ticket page showing a teammate viewing it and a reply stopped as stale has none', async () => {
  const page = await consolePage();
  const ticket = await openTicket(page, `Audit collision ${Date.now()}`);
  const bea = await agentAccount({ name: 'Bea Beside', email: 'bea@a11y.northwind.test' });
  const other = await newPage();
  await signInConsole(other, { email: bea.email });
  await openTicket(other, ticket.subject, { existing: ticket });
  await page.locator('#td-collision').waitFor({ state: 'visible', timeout: WAIT });

  await page.fill('#td-reply', 'On its way.');
  await api('POST', `/tickets/${ticket.id}/comments`, { body: 'Teammate: sent yesterday.', isInternal: true });
  await page.locator('#td-timeline li', { hasText: 'sent yesterday' }).waitFor({ state: 'visible', timeout: WAIT });
  await page.click('#td-send');
  await page.locator('#td-conflict').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'ticket-collision');
});

test('the escalate dialog has none', async () => {
  const page = await consolePage();
  await openTicket(page, `Audit escalation ${Date.now()}`);
  await page.click('#td-escalate');
  await page.locator('#escalate-dialog').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'escalate-dialog');
});

test('the new-ticket dialog has none', async () => {
  const page = await consolePage();
  await page.click('#view-tickets');
  await page.click('#new-ticket');
  await page.locator('#new-ticket-dialog').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'new-ticket-dialog');
});

test('the search dialog with hits of every kind has none', async () => {
  const word = `audit${Date.now().toString().slice(-7)}`;
  await api('POST', '/tickets', { subject: `Refund for the ${word} order`, entityId: ENTITY_ID });
  await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName: `Rita ${word}` });
  await api('POST', '/contacts', { name: `Carl ${word}`, emails: [`carl.${word}@example.com`] });
  await api('POST', '/kb/articles', { title: `Returning a ${word} parcel`, content: 'Pack it.', isPublished: true, entityId: ENTITY_ID });
  const page = await consolePage();
  await page.keyboard.press('/');
  await page.fill('#search-input', word);
  await page.waitForFunction(() => document.querySelectorAll('#search-results [role="option"]').length === 4, null, { timeout: WAIT });
  await audit(page, 'search-dialog');
});

test("a contact's peek (from search) has none", async () => {
  const word = `peek${Date.now().toString().slice(-7)}`;
  const email = `dana.${word}@example.com`;
  await api('POST', '/contacts', { name: `Dana ${word}`, emails: [email] });
  await api('POST', '/tickets', { subject: 'Where is my parcel?', visitorEmail: email, entityId: ENTITY_ID });
  const page = await consolePage();
  await page.keyboard.press('/');
  await page.fill('#search-input', word);
  await page.waitForFunction(() => document.querySelectorAll('#search-results [role="option"]').length === 1, null, { timeout: WAIT });
  await page.keyboard.press('Enter');
  await page.locator('#peek-dialog .peek-item').first().waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'peek-dialog');
});

test('the list of keyboard shortcuts has none', async () => {
  const page = await consolePage();
  await page.click('#shortcuts-button');
  await page.locator('#shortcuts-dialog').waitFor({ state: 'visible', timeout: WAIT });
  await audit(page, 'shortcuts-dialog');
});

test('at 390 px wide, the Chats view with a conversation open has none', async () => {
  const page = await consolePage(390);
  await openChat(page, 'Pip Phone');
  await audit(page, 'chats-390');
});

test('at 390 px wide, the Tickets view with a ticket open has none', async () => {
  const page = await consolePage(390);
  await openTicket(page, `Audit phone ${Date.now()}`);
  await audit(page, 'tickets-390');
});

// Browser tests of the console's Tickets view (see run.sh): the inboxes
// (mine, unassigned, each of the agent's teams, all, and saved views) list
// their tickets with counts that follow live; a ticket's tags and custom
// fields are edited in place; an agent creates a ticket for a customer.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { ENTITY_ID, SHOTS, WAIT, agentAccount, agentsOffline, api, launchChromium, shot, signInConsole } from './support.js';

let browser;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await agentsOffline();
});

async function ownBrowserPage() {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  return context.newPage();
}

/** The OPEN tickets `query` selects, as the API counts them. */
async function openTotal(query) {
  const page = await api('GET', `/tickets?limit=1&status=OPEN&${new URLSearchParams(query)}`);
  return page.total;
}

/** Waits until the inbox `key` shows `count`. */
async function countIs(page, key, count) {
  await page.waitForFunction(
    ([view, expected]) => document.querySelector(`.inbox-view[data-view="${view}"] .count`)?.textContent === String(expected),
    [key, count],
    { timeout: WAIT },
  );
}

/** Polls `check` (async) until it holds. */
async function until(check, what) {
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`never: ${what}`);
}

/** Picks inbox `key` and waits until the list shows exactly `numbers`, in any order. */
async function inboxLists(page, key, numbers) {
  await page.click(`.inbox-view[data-view="${key}"]`);
  const wanted = [...numbers].sort();
  await page.waitForFunction(
    (expected) => {
      const shown = [...document.querySelectorAll('#ticket-list .ticket-item')].map((item) => item.dataset.number).sort();
      return JSON.stringify(shown) === JSON.stringify(expected);
    },
    wanted,
    { timeout: WAIT },
  );
}

test('the inboxes — mine, unassigned, my team, all, a saved view — list their tickets with counts that follow live', async () => {
  const vera = await agentAccount({ name: 'Vera Inbox', email: 'vera@inbox.northwind.test', role: 'AGENT' });
  const team = await api('POST', '/teams', { name: 'Returns (inbox test)', memberIds: [vera.id] });
  const tag = 'inbox-views';
  const create = (extra) => api('POST', '/tickets', { subject: 'Inbox test', tags: [tag], entityId: ENTITY_ID, ...extra });
  // A ticket is created unassigned: Vera's is then given to her.
  const mine = await create({});
  await api('PATCH', `/tickets/${mine.id}`, { assignedToId: vera.id });
  const inTeam = await create({ teamId: team.id });
  const loose = await create({});
  const saved = await api('POST', '/views', { name: 'Inbox test tickets', visibility: 'shared', filters: { tag: [tag] } });

  const page = await ownBrowserPage();
  await signInConsole(page, { email: vera.email });
  await page.click('#view-tickets');

  // Each count is what the service counts for that inbox.
  await countIs(page, 'mine', await openTotal({ assignedToId: vera.id }));
  await countIs(page, 'unassigned', await openTotal({ assigned: 'false' }));
  await countIs(page, `team:${team.id}`, await openTotal({ teamId: team.id }));
  await countIs(page, 'all', await openTotal({}));
  await countIs(page, `view:${saved.id}`, 3);

  // Each inbox lists its tickets (the tag keeps other tests' tickets out).
  await page.fill('#tf-tag', tag);
  await inboxLists(page, 'mine', [mine.ticketNumber]);
  await inboxLists(page, 'unassigned', [inTeam.ticketNumber, loose.ticketNumber]);
  await inboxLists(page, `team:${team.id}`, [inTeam.ticketNumber]);
  await inboxLists(page, 'all', [mine.ticketNumber, inTeam.ticketNumber, loose.ticketNumber]);
  await page.fill('#tf-tag', '');
  await inboxLists(page, `view:${saved.id}`, [mine.ticketNumber, inTeam.ticketNumber, loose.ticketNumber]);
  await shot(page, 'console-inbox-views');

  // A ticket given to Vera elsewhere moves between the counts at once.
  const before = { mine: await openTotal({ assignedToId: vera.id }), unassigned: await openTotal({ assigned: 'false' }) };
  await api('PATCH', `/tickets/${loose.id}`, { assignedToId: vera.id });
  await countIs(page, 'mine', before.mine + 1);
  await countIs(page, 'unassigned', before.unassigned - 1);
  // And a new one of the saved view shows in it, counted.
  const late = await create({});
  await countIs(page, `view:${saved.id}`, 4);
  await page.waitForFunction(
    (number) => [...document.querySelectorAll('#ticket-list .ticket-item')].some((i) => i.dataset.number === number),
    late.ticketNumber,
    {
      timeout: WAIT,
    },
  );
});

test("a ticket's tags and custom fields are edited in place", async () => {
  // Keys of their own: every test file shares the company (another test
  // defines a chat's `plan`).
  await api('POST', '/settings/custom-fields', { key: 'order_ref', label: 'Order reference', type: 'text', appliesTo: ['ticket'] });
  await api('POST', '/settings/custom-fields', {
    key: 'support_plan',
    label: 'Support plan',
    type: 'select',
    options: ['free', 'pro'],
    appliesTo: ['ticket'],
  });
  // Reading the field definitions is an admin's right.
  const ida = await agentAccount({ name: 'Ida Inplace', email: 'ida@inbox.northwind.test', role: 'ADMIN' });
  const tag = 'in-place';
  const ticket = await api('POST', '/tickets', { subject: 'Edit me in place', tags: [tag, 'old-tag'], entityId: ENTITY_ID });
  const page = await ownBrowserPage();
  await signInConsole(page, { email: ida.email });
  await page.click('#view-tickets');
  await page.fill('#tf-tag', tag);
  const row = page.locator(`#ticket-list .ticket-item[data-number="${ticket.ticketNumber}"]`);
  await row.first().click({ timeout: WAIT });
  await page.locator('#tm-tags .tag[data-tag="old-tag"]').waitFor({ state: 'visible', timeout: WAIT });

  // A tag added with Enter, another removed by its button.
  await page.fill('#tm-tag-input', 'VIP');
  await page.press('#tm-tag-input', 'Enter');
  await page.locator('#tm-tags .tag[data-tag="vip"]').waitFor({ state: 'visible', timeout: WAIT });
  await page.click('#tm-tags .tag[data-tag="old-tag"] .tag-remove');
  await page.locator('#tm-tags .tag[data-tag="old-tag"]').waitFor({ state: 'detached', timeout: WAIT });

  // Fields saved as they change.
  await page.fill('#tm-cf-order_ref', 'A-1001');
  await page.press('#tm-cf-order_ref', 'Tab');
  await page.selectOption('#tm-cf-support_plan', 'pro');
  await until(async () => {
    const read = await api('GET', `/tickets/${ticket.id}`);
    return read.customFields?.support_plan === 'pro' && read.customFields?.order_ref === 'A-1001';
  }, 'both fields saved');
  const read = await api('GET', `/tickets/${ticket.id}`);
  assert.deepEqual(read.tags, [tag, 'vip'].sort());
  assert.deepEqual(read.customFields, { order_ref: 'A-1001', support_plan: 'pro' });
  await shot(page, 'console-ticket-tags-fields');
});

test('an agent creates a ticket for a customer, and it opens', async () => {
  const noor = await agentAccount({ name: 'Noor Create', email: 'noor@inbox.northwind.test', role: 'AGENT' });
  const page = await ownBrowserPage();
  await signInConsole(page, { email: noor.email });
  await page.click('#view-tickets');

  await page.click('#new-ticket');
  await page.locator('#new-ticket-dialog').waitFor({ state: 'visible', timeout: WAIT });
  await page.fill('#nt-subject', 'Phone order: wrong size');
  await page.fill('#nt-email', 'caller@example.com');
  await page.selectOption('#nt-priority', 'HIGH');
  await page.fill('#nt-tags', 'phone, returns');
  await page.fill('#nt-description', 'Called in: the shoes are a size too small.');
  await shot(page, 'console-new-ticket');
  await page.click('#nt-submit');

  await page.locator('#new-ticket-dialog').waitFor({ state: 'hidden', timeout: WAIT });
  await page.waitForFunction(() => document.querySelector('#td-subject')?.textContent === 'Phone order: wrong size', null, {
    timeout: WAIT,
  });
  const number = await page.textContent('#td-number');
  const found = await api('GET', `/tickets?ticketNumber=${encodeURIComponent(number)}`);
  const ticket = found.data[0];
  assert.equal(ticket.visitorEmail, 'caller@example.com');
  assert.equal(ticket.priority, 'HIGH');
  assert.deepEqual(ticket.tags, ['phone', 'returns']);
  assert.equal(ticket.description, 'Called in: the shoes are a size too small.');
});

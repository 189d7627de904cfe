// Browser tests of collision on a ticket (see run.sh): two agents in two
// browsers on one ticket see each other viewing and typing, and the reply
// of the second, begun before the first's arrived, is stopped with what
// changed since and then sent on purpose.

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

/** A page in a browser of its own (its own cookies): one agent. */
async function ownBrowserPage() {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  return context.newPage();
}

/** Opens `ticket` in the Tickets view, found by its tag. */
async function openTicket(page, ticket, tag) {
  await page.click('#view-tickets');
  await page.fill('#tf-tag', tag);
  const row = page.locator(`#ticket-list .ticket-item[data-number="${ticket.ticketNumber}"]`);
  await row.first().waitFor({ state: 'visible', timeout: WAIT });
  await row.first().click();
  await page.waitForFunction((number) => document.querySelector('#td-number')?.textContent === number, ticket.ticketNumber, {
    timeout: WAIT,
  });
}

/** Waits until `page` shows `user` on the ticket in `state` ('viewing' or 'typing'). */
async function seesOther(page, user, state) {
  const badge = page.locator(`#td-collision .watcher[data-user-id="${user.id}"][data-state="${state}"]`);
  await badge.waitFor({ state: 'visible', timeout: WAIT });
  return badge.textContent();
}

test('two agents on one ticket see each other viewing and typing, and the second reply is stopped, then sent on purpose', async () => {
  const ann = await agentAccount({ name: 'Ann Collision', email: 'ann@collision.northwind.test', role: 'AGENT' });
  const ben = await agentAccount({ name: 'Ben Collision', email: 'ben@collision.northwind.test', role: 'AGENT' });
  const tag = 'collision-two-agents';
  const ticket = await api('POST', '/tickets', {
    subject: 'Where is my parcel?',
    tags: [tag],
    entityId: ENTITY_ID,
  });

  const annPage = await ownBrowserPage();
  await signInConsole(annPage, { email: ann.email });
  const benPage = await ownBrowserPage();
  await signInConsole(benPage, { email: ben.email });
  await openTicket(annPage, ticket, tag);
  await openTicket(benPage, ticket, tag);

  // Each sees the other viewing.
  assert.match(await seesOther(annPage, ben, 'viewing'), /Ben Collision is viewing/);
  assert.match(await seesOther(benPage, ann, 'viewing'), /Ann Collision is viewing/);

  // Ben starts his reply: Ann sees him typing.
  await benPage.locator('#td-reply').pressSequentially('Hi! Your parcel left', { delay: 10 });
  assert.match(await seesOther(annPage, ben, 'typing'), /Ben Collision is typing/);

  // Ann answers first.
  await annPage.fill('#td-reply', 'Ann: it ships today.');
  assert.match(await seesOther(benPage, ann, 'typing'), /Ann Collision is typing/);
  await annPage.click('#td-send');
  await benPage.locator('#td-timeline li', { hasText: 'Ann: it ships today.' }).waitFor({ state: 'visible', timeout: WAIT });

  // Ben's reply was begun before Ann's arrived: stopped, with what changed.
  await benPage.locator('#td-reply').pressSequentially(' this morning.', { delay: 10 });
  await benPage.click('#td-send');
  const conflict = benPage.locator('#td-conflict');
  await conflict.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await conflict.textContent(), /not sent/);
  assert.match(await conflict.textContent(), /New comment \(Ann Collision\)/);
  assert.equal(await benPage.inputValue('#td-reply'), 'Hi! Your parcel left this morning.');
  await shot(benPage, 'console-collision-stopped');
  let comments = await api('GET', `/tickets/${ticket.id}/comments?limit=100`);
  assert.deepEqual(
    comments.data.map((c) => c.body),
    ['Ann: it ships today.'],
  );

  // He sends it anyway, on purpose.
  await benPage.click('#conflict-send');
  await benPage.locator('#td-timeline li', { hasText: 'Hi! Your parcel left this morning.' }).waitFor({ state: 'visible', timeout: WAIT });
  await conflict.waitFor({ state: 'hidden', timeout: WAIT });
  comments = await api('GET', `/tickets/${ticket.id}/comments?limit=100`);
  assert.deepEqual(
    comments.data.map((c) => c.body),
    ['Ann: it ships today.', 'Hi! Your parcel left this morning.'],
  );
  await shot(annPage, 'console-collision-ann');
  await shot(benPage, 'console-collision-ben');
});

test('a change made on a stale view is stopped, and rereading shows the ticket as it is before trying again', async () => {
  const cara = await agentAccount({ name: 'Cara Collision', email: 'cara@collision.northwind.test', role: 'AGENT' });
  const tag = 'collision-reread';
  const ticket = await api('POST', '/tickets', { subject: 'Refund, please', tags: [tag], entityId: ENTITY_ID });
  const page = await ownBrowserPage();
  await signInConsole(page, { email: cara.email });
  await openTicket(page, ticket, tag);
  await page.fill('#td-reply', 'Cara: refund on its way.');

  // A teammate's note arrives while Cara writes.
  await api('POST', `/tickets/${ticket.id}/comments`, { body: 'Teammate: refund already sent yesterday.', isInternal: true });
  await page.locator('#td-timeline li', { hasText: 'refund already sent' }).waitFor({ state: 'visible', timeout: WAIT });
  await page.click('#td-send');
  await page.locator('#td-conflict').waitFor({ state: 'visible', timeout: WAIT });

  // She rereads: the draft stays, now based on the ticket as it is, and goes.
  await page.click('#conflict-reread');
  await page.locator('#td-conflict').waitFor({ state: 'hidden', timeout: WAIT });
  assert.equal(await page.inputValue('#td-reply'), 'Cara: refund on its way.');
  await page.click('#td-send');
  await page.locator('#td-timeline li', { hasText: 'Cara: refund on its way.' }).waitFor({ state: 'visible', timeout: WAIT });
  const comments = await api('GET', `/tickets/${ticket.id}/comments?limit=100`);
  assert.equal(comments.data.length, 2);
});

// Browser tests of the agent console's Tickets view (see run.sh; helpers
// in demo-support.js): a live inbox two agents share, internal notes kept
// from the visitor, a thousand tickets paged.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WIDGET_KEY, ENTITY_ID, WAIT, api, shot } from './support.js';
import { textIn, visible, signInAgent, leaveConsole, openVisitor, startChat, useBrowser } from './demo-support.js';

useBrowser();

/** The row of the ticket `subject` in an agent's ticket list. */
function ticketRow(page, subject) {
  return page.locator('#ticket-list .ticket-item', { hasText: subject });
}

test('two agents share a live ticket inbox; internal notes never reach the visitor', async () => {
  const alma = await signInAgent({ name: 'Alma Agent', email: 'alma@northwind.test', width: 1400 });
  const bo = await signInAgent({ name: 'Bo Agent', email: 'bo@northwind.test', width: 1400 });
  const visitor = await openVisitor(`widgetKey=${WIDGET_KEY}`);
  const a = alma.page;
  const b = bo.page;
  const note = 'Refund approved by finance, do not tell the customer yet';
  try {
    // Bo watches the OPEN tickets while Alma answers a chat.
    await b.click('#view-tickets');
    await visible(b.locator('#tickets-view'));
    assert.equal(
      await b.getAttribute('.sessions .segment[data-filter="ACTIVE"]', 'aria-pressed'),
      'true',
      'the view switch leaves the chat filter alone',
    );
    await startChat(visitor.page, { question: 'My parcel never arrived', name: 'Nina Parcel' });
    const chat = a.locator('#session-list .session', { hasText: 'Nina Parcel' });
    await visible(chat);
    await chat.click();
    await visible(a.locator('#messages .msg-visitor', { hasText: 'My parcel never arrived' }));

    // Alma turns it into a ticket: it appears in Bo's list live.
    await a.click('#make-ticket');
    await visible(a.locator('#ticket-dialog'));
    const subject = await a.inputValue('#ticket-subject');
    await a.click('#ticket-submit');
    await visible(a.locator('#thread-ticket', { hasText: 'TKT-' }));
    await visible(ticketRow(b, subject));
    await visible(b.locator('#ticket-list .ticket-item.is-unread', { hasText: subject }));
    await shot(b, 'agent-tickets-1-new-ticket-live');

    // Bo opens it and takes it; Alma's list shows the change live.
    await a.click('#view-tickets');
    await visible(ticketRow(a, subject));
    await ticketRow(b, subject).click();
    await textIn(b, '#td-subject', subject);
    await textIn(b, '#td-description', 'My parcel never arrived');
    await b.click('#td-assign-me');
    await visible(ticketRow(a, subject).filter({ hasText: 'Assigned to Bo Agent' }));
    await visible(a.locator('#ticket-list .ticket-item.is-unread', { hasText: subject }));

    // Alma opens it with the keyboard and adds an internal note.
    await a.locator('#ticket-list').click({ position: { x: 2, y: 2 } });
    for (let i = 0; i < 20; i += 1) {
      const selected = a.locator('#ticket-list .ticket-item[aria-selected="true"]');
      if ((await selected.count()) > 0 && (await selected.textContent()).includes(subject)) break;
      await a.keyboard.press('j');
    }
    await a.keyboard.press('Enter');
    await textIn(a, '#td-subject', subject);
    await textIn(a, '#td-sub', 'assigned to Bo Agent');
    await a.keyboard.press('r');
    assert.equal(await a.evaluate(() => document.activeElement?.id), 'td-reply');
    await a.check('#td-internal');
    await a.fill('#td-reply', note);
    await a.keyboard.press('Control+Enter');
    await visible(a.locator('#td-timeline .entry-note', { hasText: note }));
    // Bo, on the same ticket, sees the note arrive (drawn as a note).
    await visible(b.locator('#td-timeline .entry-note', { hasText: note }));
    await shot(a, 'agent-tickets-2-internal-note');

    // Resolving moves it out of the OPEN view in both consoles.
    await a.selectOption('#td-status', 'RESOLVED');
    await ticketRow(a, subject).waitFor({ state: 'detached', timeout: WAIT });
    await ticketRow(b, subject).waitFor({ state: 'detached', timeout: WAIT });
    await shot(b, 'agent-tickets-3-resolved-left-open-view');

    // The visitor's widget never showed the note, nor received it.
    await visible(visitor.page.locator('.sd-msg-system', { hasText: /Ticket TKT-\d+ was created/ }));
    assert.equal(await visitor.page.locator('body', { hasText: note }).count(), 0);
    assert.ok(!visitor.seen.some((item) => item.includes(note)), 'the note reached the visitor page');
    await shot(visitor.page, 'visitor-tickets-no-internal-note');
  } finally {
    await visitor.context.close();
    await leaveConsole(alma, 'Alma Agent');
    await leaveConsole(bo, 'Bo Agent');
  }
});

test('the Tickets view stays usable with a thousand tickets (paged)', async () => {
  const batch = Array.from({ length: 1000 }, (_, i) => i);
  for (let at = 0; at < batch.length; at += 50) {
    await Promise.all(
      batch
        .slice(at, at + 50)
        .map((i) => api('POST', '/tickets', { subject: `Bulk ticket ${String(i).padStart(4, '0')}`, entityId: ENTITY_ID })),
    );
  }
  const agent = await signInAgent({ name: 'Pia Pager', email: 'pia@northwind.test' });
  const { page } = agent;
  try {
    await page.click('#view-tickets');
    await visible(ticketRow(page, 'Bulk ticket 0999'));
    assert.equal(await page.locator('#ticket-list .ticket-item').count(), 50, 'one page at a time');
    await visible(page.locator('#tickets-more'));
    // j walks the list and fetches the next page ahead of the end.
    await page.locator('#ticket-list').click({ position: { x: 2, y: 2 } });
    for (let i = 0; i < 50; i += 1) await page.keyboard.press('j');
    await page.waitForFunction(() => document.querySelectorAll('#ticket-list .ticket-item').length >= 100, null, {
      timeout: WAIT,
    });
    // A search narrows the list on the server.
    await page.fill('#tf-q', 'Bulk ticket 0123');
    await visible(ticketRow(page, 'Bulk ticket 0123'));
    await page.waitForFunction(() => document.querySelectorAll('#ticket-list .ticket-item').length < 50, null, {
      timeout: WAIT,
    });
    await shot(page, 'agent-tickets-4-thousand-tickets');
  } finally {
    await leaveConsole(agent, 'Pia Pager');
  }
});

// Browser tests of the console's global search and keyboard shortcuts (see
// run.sh): `/` opens a search of tickets, chats, contacts and knowledge-base
// articles whose hits come grouped by kind, the arrow keys move through
// them, Enter opens one and Escape closes; the dialog keeps the keyboard
// inside and gives the focus back; `?` lists every shortcut of the key table.
// Each test searches a word of its own, which only its own records hold.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { ENTITY_ID, SHOTS, WAIT, agentAccount, agentsOffline, api, launchChromium, shot, signInConsole } from './support.js';

let browser;
let agent;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
  agent = await agentAccount({ name: 'Sam Search', email: 'sam@search.northwind.test', role: 'AGENT' });
});

after(async () => {
  await browser?.close();
  await agentsOffline();
});

/** A word no other record holds (letters then digits: one search word). */
function uniqueWord(stem) {
  return `${stem}${Date.now().toString().slice(-7)}${Math.floor(Math.random() * 1000)}`;
}

/** A ticket, a chat, a contact and a published article, each holding `word`. */
async function recordsWith(word) {
  const ticket = await api('POST', '/tickets', { subject: `Refund for the ${word} order`, entityId: ENTITY_ID });
  const chat = await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName: `Rita ${word}` });
  const contact = await api('POST', '/contacts', { name: `Carl ${word}`, emails: [`carl.${word}@example.com`] });
  const article = await api('POST', '/kb/articles', {
    title: `Returning a ${word} parcel`,
    content: `Pack the ${word} parcel in its box.\n\n- Print the label\n- Drop it at the post office`,
    isPublished: true,
    entityId: ENTITY_ID,
  });
  return { ticket, chat, contact, article };
}

/** A signed-in console page. */
async function consolePage(viewport = { width: 1440, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await signInConsole(page, { email: agent.email });
  return page;
}

/** Opens search with `/`, types `word`, and waits until `count` hits show. */
async function searchFor(page, word, count) {
  await page.keyboard.press('/');
  const input = page.getByRole('combobox', { name: 'Search tickets, chats, contacts and articles' });
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill(word);
  await page.waitForFunction((n) => document.querySelectorAll('#search-results [role="option"]').length === n, count, { timeout: WAIT });
}

/** The kind of the result search has active. */
function activeKind(page) {
  return page.evaluate(
    () => document.getElementById(document.querySelector('#search-input').getAttribute('aria-activedescendant'))?.dataset.kind,
  );
}

test('"/" opens search, and one word finds a ticket, a chat, a contact and an article, grouped by kind', async () => {
  const word = uniqueWord('grouped');
  const { ticket, chat, contact, article } = await recordsWith(word);
  const page = await consolePage();
  await searchFor(page, word, 4);

  const groups = await page.$$eval('#search-results .search-group', (nodes) =>
    nodes.map((group) => ({
      kind: group.dataset.kind,
      title: group.querySelector('.search-group-title').textContent,
      ids: [...group.querySelectorAll('[role="option"]')].map((option) => option.dataset.id),
    })),
  );
  assert.deepEqual(groups, [
    { kind: 'ticket', title: 'Tickets', ids: [ticket.id] },
    { kind: 'chat', title: 'Chats', ids: [chat.id] },
    { kind: 'contact', title: 'Contacts', ids: [contact.id] },
    { kind: 'article', title: 'Knowledge base', ids: [article.id] },
  ]);
  await shot(page, 'console-search');
});

test('the arrow keys move through the hits across their groups', async () => {
  const word = uniqueWord('arrows');
  await recordsWith(word);
  const page = await consolePage();
  await searchFor(page, word, 4);

  const seen = [await activeKind(page)];
  for (const key of ['ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowUp']) {
    await page.keyboard.press(key);
    seen.push(await activeKind(page));
  }
  // The first hit is active from the start; the last one stops the arrow.
  assert.deepEqual(seen, ['ticket', 'chat', 'contact', 'article', 'article', 'contact']);
});

test('Enter opens the ticket found, on the ticket page', async () => {
  const word = uniqueWord('openticket');
  const { ticket } = await recordsWith(word);
  const page = await consolePage();
  await searchFor(page, word, 4);

  await page.keyboard.press('Enter');
  await page.locator('#search-dialog').waitFor({ state: 'hidden', timeout: WAIT });
  await page.waitForFunction((subject) => document.querySelector('#td-subject')?.textContent === subject, ticket.subject, {
    timeout: WAIT,
  });
  assert.equal(await page.isVisible('#tickets-view'), true);
});

test('Enter on a chat found opens the conversation', async () => {
  const word = uniqueWord('openchat');
  const { chat } = await recordsWith(word);
  const page = await consolePage();
  await searchFor(page, word, 4);

  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForFunction((name) => document.querySelector('#thread-name')?.textContent === name, chat.visitorName, { timeout: WAIT });
  assert.equal(await page.isVisible('#thread'), true);
});

test('a contact found opens with their tickets, and one of them opens from there', async () => {
  const word = uniqueWord('contact');
  const email = `dana.${word}@example.com`;
  const contact = await api('POST', '/contacts', { name: `Dana ${word}`, emails: [email] });
  // The ticket is the contact's by its email (not by the word: its subject has none).
  const ticket = await api('POST', '/tickets', { subject: 'Where is my parcel?', visitorEmail: email, entityId: ENTITY_ID });
  const page = await consolePage();
  await searchFor(page, word, 1);

  await page.keyboard.press('Enter');
  const item = page.locator(`#peek-dialog .peek-item[data-kind="ticket"][data-id="${ticket.id}"]`);
  await item.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.textContent('#peek-title'), contact.name);
  await shot(page, 'console-search-contact');
  await item.click();
  await page.waitForFunction((subject) => document.querySelector('#td-subject')?.textContent === subject, ticket.subject, {
    timeout: WAIT,
  });
});

test('an article found opens with its text', async () => {
  const word = uniqueWord('article');
  const { article } = await recordsWith(word);
  const page = await consolePage();
  await searchFor(page, word, 4);

  for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.locator('#peek-article li').first().waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.textContent('#peek-title'), article.title);
  assert.deepEqual(await page.$$eval('#peek-article li', (items) => items.map((li) => li.textContent)), [
    'Print the label',
    'Drop it at the post office',
  ]);
});

test('Escape closes search and gives the focus back to the button that opened it', async () => {
  const page = await consolePage();
  await page.click('#search-button');
  await page.locator('#search-input').waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'search-input');

  await page.keyboard.press('Escape');
  await page.locator('#search-dialog').waitFor({ state: 'hidden', timeout: WAIT });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'search-button');
});

test('Tab stays in the search dialog: from its last control to its first, and back with Shift+Tab', async () => {
  const page = await consolePage();
  await page.keyboard.press('/');
  await page.locator('#search-input').waitFor({ state: 'visible', timeout: WAIT });

  await page.focus('#search-close');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'search-input');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'search-close');
});

test('"?" lists every shortcut of the key table the console\'s keys run on', async () => {
  const page = await consolePage();
  // The table itself, as the page's own module has it.
  const table = await page.evaluate(async () => {
    const { SHORTCUTS } = await import('/app/js/console/keys.js');
    return SHORTCUTS.map(({ id, does }) => ({ id, does }));
  });
  await page.keyboard.press('?');
  await page.locator('#shortcuts-dialog').waitFor({ state: 'visible', timeout: WAIT });

  const listed = await page.$$eval('#shortcuts-dialog dd[data-shortcut]', (rows) =>
    rows.map((row) => ({ id: row.dataset.shortcut, does: row.textContent })),
  );
  assert.deepEqual(listed, table);
  await shot(page, 'console-shortcuts');
});

test('the "?" button opens the list of shortcuts too, and closing it gives the focus back', async () => {
  const page = await consolePage();
  await page.click('#shortcuts-button');
  await page.locator('#shortcuts-dialog').waitFor({ state: 'visible', timeout: WAIT });
  await page.click('#shortcuts-close');
  await page.locator('#shortcuts-dialog').waitFor({ state: 'hidden', timeout: WAIT });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'shortcuts-button');
});

/** The Tickets view listing only two new tickets of a tag of their own, newest first. */
async function twoTicketsListed() {
  const tag = uniqueWord('keys');
  const older = await api('POST', '/tickets', { subject: `Older (${tag})`, tags: [tag], entityId: ENTITY_ID });
  const newer = await api('POST', '/tickets', { subject: `Newer (${tag})`, tags: [tag], entityId: ENTITY_ID });
  const page = await consolePage();
  await page.click('#view-tickets');
  await page.fill('#tf-tag', tag);
  await page.waitForFunction(() => document.querySelectorAll('#ticket-list .ticket-item').length === 2, null, { timeout: WAIT });
  // Out of the filter's field: keys typed there are text, not shortcuts.
  await page.click('#tickets-title');
  return { page, older, newer };
}

/** The number of the ticket the list has selected. */
function selectedNumber(page) {
  return page.evaluate(() => document.querySelector('#ticket-list .ticket-item[aria-selected="true"]')?.dataset.number);
}

test('in the Tickets view, j and k (from the key table) move the selection down and up the list', async () => {
  const { page, older, newer } = await twoTicketsListed();
  const seen = [];
  for (const key of ['j', 'j', 'k']) {
    await page.keyboard.press(key);
    seen.push(await selectedNumber(page));
  }
  assert.deepEqual(seen, [newer.ticketNumber, older.ticketNumber, newer.ticketNumber]);
});

test('in the Tickets view, Enter opens the ticket selected and r goes to its comment box', async () => {
  const { page, older } = await twoTicketsListed();
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('Enter');
  await page.waitForFunction((subject) => document.querySelector('#td-subject')?.textContent === subject, older.subject, { timeout: WAIT });
  await page.click('#td-number');
  await page.keyboard.press('r');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'td-reply');
});

test('at 390 px wide, the Search button (its icon alone) opens search, and the hits fit the width', async () => {
  const word = uniqueWord('phone');
  await recordsWith(word);
  const page = await consolePage({ width: 390, height: 844 });
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const input = page.getByRole('combobox', { name: 'Search tickets, chats, contacts and articles' });
  await input.fill(word);
  await page.waitForFunction(() => document.querySelectorAll('#search-results [role="option"]').length === 4, null, { timeout: WAIT });

  const overflow = await page.evaluate(() => {
    const dialog = document.querySelector('#search-dialog');
    return { inside: dialog.scrollWidth - dialog.clientWidth, right: dialog.getBoundingClientRect().right - window.innerWidth };
  });
  assert.deepEqual({ inside: Math.max(0, overflow.inside), right: Math.max(0, overflow.right) }, { inside: 0, right: 0 });
  await shot(page, 'console-search-390');
});

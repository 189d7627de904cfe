// Browser tests of the agent console's team and SLA parts, and of the
// visitor's place in a team's queue (see run.sh): teams routed by the
// service put chats in "Assigned to you" live, queue lengths and positions
// show as they change, tickets carry SLA badges, sorted by due time, and the
// ticket page shows its SLA, updated live.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import {
  BASE,
  WIDGET_KEY,
  ENTITY_ID,
  SHOTS,
  WAIT,
  api,
  shot,
  launchChromium,
  setPassword,
  signInConsole,
  agentsOffline,
} from './support.js';

/** A 1-minute SLA target breaches one minute after the ticket is created. */
const BREACH_WAIT = 150_000;

/**
 * Tickets tagged `sla-warn` are inside their warning time from the start
 * (30 minutes to answer, warned 60 minutes ahead); `sla-demo` tickets get a
 * first response target by priority and no warning.
 */
const SLA_POLICIES = {
  policies: [
    {
      name: 'Browser tests: warned at once',
      conditions: { tags: ['sla-warn'] },
      targets: { HIGH: { firstResponseMinutes: 30 } },
      warnMinutes: 60,
    },
    {
      name: 'Browser tests: by priority',
      conditions: { tags: ['sla-demo'] },
      targets: {
        URGENT: { firstResponseMinutes: 1 },
        HIGH: { firstResponseMinutes: 30 },
        MEDIUM: { firstResponseMinutes: 120 },
        LOW: { firstResponseMinutes: 600 },
      },
      warnMinutes: 0,
    },
  ],
};

let browser;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
  await api('PUT', '/settings/sla-policies', SLA_POLICIES);
});

after(async () => {
  await browser?.close();
  await agentsOffline();
});

// --- helpers -----------------------------------------------------------------

async function visible(locator, timeout = WAIT) {
  await locator.first().waitFor({ state: 'visible', timeout });
}

/** Waits until the element's text contains `text`. */
async function textIn(page, selector, text) {
  await page.waitForFunction(([sel, expected]) => document.querySelector(sel)?.textContent.includes(expected), [selector, text], {
    timeout: WAIT,
  });
}

/** Polls the API until the agent is online (routing only picks online agents). */
async function waitOnline(userId) {
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    const online = await api('GET', '/chat/agent-presence');
    if (online.data.some((agent) => agent.userId === userId)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`agent ${userId} never came online`);
}

/** A user of the company (made here), to put in teams before signing in. */
async function agentUser(name, email) {
  return api('POST', '/users', { name, email, role: 'AGENT' });
}

/** The user signed in to the console with a password, online. */
async function signInAgent(user) {
  setPassword(user.email);
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signInConsole(page, { email: user.email });
  await waitOnline(user.id);
  return { context, page, user };
}

async function leaveConsole(agent) {
  await agent.page.close({ runBeforeUnload: true });
  await agent.context.close();
  await api('DELETE', `/chat/agent-presence/${agent.user.id}`).catch(() => {});
}

/** A team serving the test entity, its default team while the test runs. */
async function routedTeam(name, memberIds, routing) {
  const team = await api('POST', '/teams', { name, memberIds, entityIds: [ENTITY_ID], routing });
  await api('PATCH', `/entities/${ENTITY_ID}`, { defaultTeamId: team.id });
  return team;
}

async function dropTeam(team) {
  await api('PATCH', `/entities/${ENTITY_ID}`, { defaultTeamId: null });
  await api('DELETE', `/teams/${team.id}`);
}

/** The visitor demo page with a chat started. */
async function visitorChat(name, question) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${BASE}/demo/visitor.html#widgetKey=${WIDGET_KEY}`);
  await page.click('#sd-launcher');
  await visible(page.locator('#sd-view-start'));
  await page.fill('#sd-question', question);
  await page.fill('#sd-name', name);
  await page.click('#sd-start');
  await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: question }));
  return { context, page };
}

async function openTickets(page, tag) {
  await page.click('#view-tickets');
  await page.fill('#tf-tag', tag);
}

function ticketRow(page, ticket) {
  return page.locator(`#ticket-list .ticket-item[data-number="${ticket.ticketNumber}"]`);
}

function createTicket(subject, priority, tags) {
  return api('POST', '/tickets', { subject, priority, tags, entityId: ENTITY_ID });
}

// --- teams and routing ---------------------------------------------------------

test('a widget chat routed to the agent lands in "Assigned to you" live', async () => {
  const rita = await agentUser('Rita Router', 'rita@console.northwind.test');
  const team = await routedTeam('Parcels', [rita.id], { mode: 'least_busy', chatCapacity: 2 });
  let agent;
  let visitor;
  try {
    agent = await signInAgent(rita);
    await textIn(agent.page, '#team-select', 'Parcels');
    assert.equal(await agent.page.locator('#assigned-list .assigned-item').count(), 0);

    visitor = await visitorChat('Paula Parcel', 'Where is my parcel?');
    await visible(agent.page.locator('#assigned-list .assigned-item', { hasText: 'Paula Parcel' }));
    await shot(agent.page, 'console-assigned-to-you');
  } finally {
    await visitor?.context.close();
    await dropTeam(team);
    if (agent) await leaveConsole(agent);
  }
});

test("the console shows its team's queue length as chats wait", async () => {
  const quinn = await agentUser('Quinn Queue', 'quinn@console.northwind.test');
  // Capacity 0: nobody can take a chat, so every new chat waits.
  const team = await routedTeam('Waiting room', [quinn.id], { mode: 'least_busy', chatCapacity: 0 });
  let agent;
  let visitor;
  try {
    agent = await signInAgent(quinn);
    await textIn(agent.page, '#queue-length', 'Nobody waiting');

    visitor = await visitorChat('Wanda Wait', 'Is anyone there?');
    await textIn(agent.page, '#queue-length', '1 chat waiting in the queue');
    await shot(agent.page, 'console-queue-length');
  } finally {
    await visitor?.context.close();
    await dropTeam(team);
    if (agent) await leaveConsole(agent);
  }
});

test('a visitor whose chat waits in the queue sees their place in line', async () => {
  // Its only member never comes online: the chat waits.
  const olive = await agentUser('Olive Offline', 'olive@console.northwind.test');
  const team = await routedTeam('Nobody home', [olive.id], { mode: 'round_robin' });
  let visitor;
  try {
    visitor = await visitorChat('Len Line', 'Can somebody help me?');
    await textIn(visitor.page, '#sd-queue', 'You are number 1 in line');
    await shot(visitor.page, 'visitor-queue-position');
  } finally {
    await visitor?.context.close();
    await dropTeam(team);
  }
});

test('the embeddable widget shows the place in line too', async () => {
  const otis = await agentUser('Otis Offline', 'otis@console.northwind.test');
  const team = await routedTeam('Nobody home either', [otis.id], { mode: 'round_robin' });
  const context = await browser.newContext({ viewport: { width: 400, height: 640 } });
  try {
    const page = await context.newPage();
    await page.goto(`${BASE}/widget/frame.html#widgetKey=${WIDGET_KEY}`);
    await page.fill('#name', 'Fran Frame');
    await page.fill('#question', 'Hello from the frame');
    await page.click('#start button[type=submit]');
    await textIn(page, '#queue', 'You are number 1 in line');
    await shot(page, 'widget-queue-position');
  } finally {
    await context.close();
    await dropTeam(team);
  }
});

// --- SLA ----------------------------------------------------------------------------

test('the tickets list sorts by SLA due time, soonest first and tickets without an SLA last', async () => {
  // Created in an order that newest-first would show backwards.
  const high = await createTicket('Sorted: high', 'HIGH', ['sla-demo', 'sla-sort']);
  const low = await createTicket('Sorted: low', 'LOW', ['sla-demo', 'sla-sort']);
  const medium = await createTicket('Sorted: medium', 'MEDIUM', ['sla-demo', 'sla-sort']);
  const none = await createTicket('Sorted: no SLA', 'URGENT', ['sla-sort']);
  const agent = await signInAgent(await agentUser('Sam Sorter', 'sam@console.northwind.test'));
  try {
    await openTickets(agent.page, 'sla-sort');
    await visible(ticketRow(agent.page, high));
    await agent.page.selectOption('#tf-order', 'sla_due');
    const expected = [high, medium, low, none].map((t) => t.ticketNumber);
    await agent.page.waitForFunction(
      (numbers) =>
        JSON.stringify([...document.querySelectorAll('#ticket-list .ticket-item')].map((b) => b.dataset.number)) ===
        JSON.stringify(numbers),
      expected,
      { timeout: WAIT },
    );
    await shot(agent.page, 'console-tickets-sla-order');
  } finally {
    await leaveConsole(agent);
  }
});

test('a ticket in its SLA warning time shows an amber badge', async () => {
  const ticket = await createTicket('Answer me soon', 'HIGH', ['sla-warn']);
  const agent = await signInAgent(await agentUser('Wes Warned', 'wes@console.northwind.test'));
  try {
    await openTickets(agent.page, 'sla-warn');
    await visible(ticketRow(agent.page, ticket).locator('.sla-badge[data-sla="warning"].badge-warn'));
    await shot(agent.page, 'console-tickets-sla-warning');
  } finally {
    await leaveConsole(agent);
  }
});

// The two breaches wait out a whole minute of SLA time (targets are whole
// minutes): they wait side by side, each with its own agent and ticket.
describe('SLA breaches, live', { concurrency: true }, () => {
  test('a ticket whose SLA breaches turns red in the open list, live', async () => {
    const agent = await signInAgent(await agentUser('Bea Breach', 'bea@console.northwind.test'));
    try {
      await openTickets(agent.page, 'sla-breach');
      await visible(agent.page.locator('#tickets-empty'));
      const ticket = await createTicket('Breach me', 'URGENT', ['sla-demo', 'sla-breach']);
      // It arrives with its due time, then the scheduler's breach turns it red.
      await visible(ticketRow(agent.page, ticket).locator('.sla-badge[data-sla="running"]'));
      await visible(ticketRow(agent.page, ticket).locator('.sla-badge[data-sla="breached"].badge-danger'), BREACH_WAIT);
      await shot(agent.page, 'console-tickets-sla-breached');
    } finally {
      await leaveConsole(agent);
    }
  });

  test("the ticket page shows the SLA's due time and turns it breached, live", async () => {
    const agent = await signInAgent(await agentUser('Pia Page', 'pia@console.northwind.test'));
    try {
      const ticket = await createTicket('Watch my SLA', 'URGENT', ['sla-demo', 'sla-page']);
      await openTickets(agent.page, 'sla-page');
      await ticketRow(agent.page, ticket).click();
      await textIn(agent.page, '#td-number', ticket.ticketNumber);
      const firstResponse = agent.page.locator('#td-sla .sla-row[data-metric="firstResponse"]');
      await visible(firstResponse.and(agent.page.locator('[data-sla="running"]')));
      assert.equal(await firstResponse.locator('time').getAttribute('datetime'), ticket.sla.firstResponseDueAt);
      // The scheduler's breach reaches the open page as an `sla.breached` frame.
      await visible(agent.page.locator('#td-sla .sla-row[data-metric="firstResponse"][data-sla="breached"]'), BREACH_WAIT);
      await shot(agent.page, 'console-ticket-page-sla-breached');
    } finally {
      await leaveConsole(agent);
    }
  });
});

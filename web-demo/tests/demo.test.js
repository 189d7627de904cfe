// Browser tests of the web demo against the running service (see run.sh):
// headless Chromium (Debian's) driven through playwright-core, one browser
// context per person so the visitor and the agents share nothing.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BASE, API_KEY, WIDGET_KEY, ENTITY_ID, SHOTS, WAIT, api, shot, launchChromium } from './support.js';

const MAIL_DIR = process.env.SD_MAIL_DIR;
const API_KEY_PATTERN = /svc_(test|live)_[A-Za-z0-9]{8,}/;

let browser;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
  // The knowledge base the widget suggests from: two published articles of
  // the entity and one draft (never suggested).
  for (const [title, content, isPublished] of [
    ['Reset your password', 'Open **Settings**, then **Security**, and choose *Reset password*. We email you a link that is valid for one hour.', true],
    ['Set up two-factor authentication', 'Protect your account with an authenticator app: Settings, Security, Two-factor.', true],
    ['Password policy (draft)', 'Internal notes about password rules.', false],
  ]) {
    await api('POST', '/kb/articles', { title, content, isPublished, entityId: ENTITY_ID });
  }
});

after(async () => {
  await browser?.close();
});

// --- helpers -----------------------------------------------------------------

/** Waits until the element's text contains `text`. */
async function textIn(page, selector, text) {
  await page.waitForFunction(
    ([sel, expected]) => document.querySelector(sel)?.textContent.includes(expected),
    [selector, text],
    { timeout: WAIT },
  );
}

/** Waits until the element's text no longer contains `text`. */
async function textGone(page, selector, text) {
  await page.waitForFunction(
    ([sel, unexpected]) => !(document.querySelector(sel)?.textContent ?? '').includes(unexpected),
    [selector, text],
    { timeout: WAIT },
  );
}

async function visible(locator) {
  await locator.first().waitFor({ state: 'visible', timeout: WAIT });
}

/** An agent console in its own browser context, signed in and online. */
async function signInAgent({ name, email, visibility = 'PUBLIC', width = 1440, height = 900 }) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  await page.goto(`${BASE}/demo/agent.html`);
  await page.fill('#api-key', API_KEY);
  await page.click('#key-submit');
  await visible(page.locator('#identity-form'));
  if (await page.isVisible('#existing-user')) await page.selectOption('#existing-user', '');
  await page.fill('#agent-name', name);
  await page.fill('#agent-email', email);
  await page.selectOption('#agent-visibility', visibility);
  await page.click('#identity-submit');
  await visible(page.locator('#console'));
  await textIn(page, '#conn-text', 'Live');
  return { context, page };
}

/**
 * Closes an agent's console at the end of a test. Leaving sends a
 * best-effort DELETE of its presence, which a page closed mid-request can
 * lose; the next test counts who is online, so make sure this agent is not.
 */
async function leaveConsole(agent, name) {
  await agent.page.close({ runBeforeUnload: true });
  await agent.context.close();
  const online = await api('GET', '/chat/agent-presence');
  for (const a of online.data.filter((a) => a.name === name)) {
    await api('DELETE', `/chat/agent-presence/${a.userId}`).catch(() => {});
  }
}

/**
 * A visitor's page, with everything it sends and receives recorded, so a
 * test can prove that no API key ever reaches it.
 */
async function openVisitor(hash, { width = 1280, height = 800, routeSockets } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const seen = [];
  page.on('request', (request) => {
    seen.push(`${request.method()} ${request.url()}`);
    seen.push(JSON.stringify(request.headers()));
    const body = request.postData();
    if (body) seen.push(body);
  });
  page.on('response', async (response) => {
    seen.push(JSON.stringify(response.headers()));
    if (response.request().resourceType() === 'fetch') {
      seen.push(await response.text().catch(() => ''));
    }
  });
  page.on('websocket', (ws) => {
    seen.push(ws.url());
    ws.on('framesent', (frame) => seen.push(String(frame.payload)));
    ws.on('framereceived', (frame) => seen.push(String(frame.payload)));
  });
  if (routeSockets) await page.routeWebSocket(/\/api\/v1\/ws/, routeSockets);
  await page.goto(hash?.startsWith('http') ? hash : `${BASE}/demo/visitor.html${hash ? `#${hash}` : ''}`);
  return { context, page, seen };
}

/** No API key in the visitor's requests, frames, DOM, storage or cookies. */
async function assertNoApiKey({ page, seen }) {
  const stored = await page.evaluate(() =>
    JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookies: document.cookie }),
  );
  const everything = [...seen, await page.content(), stored];
  assert.ok(seen.length > 10, 'the visitor page was observed');
  for (const item of everything) {
    assert.ok(!item.includes(API_KEY), `the API key reached the visitor page: ${item.slice(0, 200)}`);
    assert.doesNotMatch(item, API_KEY_PATTERN, `an API key reached the visitor page: ${item.slice(0, 200)}`);
    assert.ok(!/x-api-key/i.test(item), `an X-API-Key header in the visitor page: ${item.slice(0, 200)}`);
  }
}

async function startChat(page, { question, name, email }) {
  await page.click('#sd-launcher');
  await visible(page.locator('#sd-view-start'));
  await page.fill('#sd-question', question);
  if (name) await page.fill('#sd-name', name);
  if (email) await page.fill('#sd-email', email);
  await page.click('#sd-start');
  await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: question }));
}

async function conversation(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('sd-widget-conversation') ?? 'null'));
}

async function agentUser(name, email) {
  return api('POST', '/users', { name, email, role: 'AGENT' });
}

// --- tests -------------------------------------------------------------------

test('a visitor starts a chat, an agent sees it live and replies, the visitor sees the reply live', async () => {
  const ann = await signInAgent({ name: 'Ann Agent', email: 'ann@northwind.test' });
  const visitor = await openVisitor(`widgetKey=${WIDGET_KEY}&poll=2`);
  const { page } = visitor;
  try {
    await page.click('#sd-launcher');
    await textIn(page, '#sd-presence-text', 'Ann Agent is online');

    // Knowledge-base suggestions while the visitor types (published only).
    await page.locator('#sd-question').pressSequentially('How do I reset my passw', { delay: 30 });
    await visible(page.locator('#sd-start-suggestions .sd-suggestion', { hasText: 'Reset your password' }));
    assert.equal(await page.locator('#sd-start-suggestions', { hasText: 'Password policy' }).count(), 0);
    await page.locator('#sd-question').pressSequentially('ord?', { delay: 30 });
    await page.fill('#sd-name', 'Vera Visitor');
    await page.fill('#sd-email', 'vera@example.com');
    await shot(page, 'visitor-1-suggestions');

    // An article opens inside the widget, and back.
    await page.locator('#sd-start-suggestions .sd-suggestion', { hasText: 'Reset your password' }).click();
    await textIn(page, '#sd-article-content', 'valid for one hour');
    await page.click('#sd-article-back');
    await visible(page.locator('#sd-view-start'));

    await page.click('#sd-start');
    await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: 'How do I reset my password?' }));

    // The agent sees the new chat appear, opens it, reads the question.
    const agent = ann.page;
    const item = agent.locator('#session-list .session', { hasText: 'Vera Visitor' });
    await visible(item);
    await item.click();
    await visible(agent.locator('#messages .msg-visitor', { hasText: 'How do I reset my password?' }));

    // Typing, both ways.
    await page.locator('#sd-input').pressSequentially('One more thing', { delay: 40 });
    await visible(agent.locator('#typing'));
    await textIn(agent, '#typing-text', 'Vera Visitor is typing');
    await agent.locator('#reply').pressSequentially('Sure', { delay: 40 });
    await visible(page.locator('#sd-typing'));
    await page.fill('#sd-input', '');

    // The reply arrives live, with the agent's name.
    await agent.fill('#reply', 'Happy to help! Open Settings → Security and choose "Reset password".');
    await agent.press('#reply', 'Enter');
    await visible(page.locator('.sd-msg-agent', { hasText: 'Open Settings → Security' }));
    await textIn(page, '#sd-messages', 'Ann Agent');
    assert.equal(await page.locator('#sd-typing').isVisible(), false, 'typing ends with the message');

    // And back: the visitor's follow-up reaches the agent live.
    await page.fill('#sd-input', 'Thanks, that worked!');
    await page.press('#sd-input', 'Enter');
    await visible(agent.locator('#messages .msg-visitor', { hasText: 'Thanks, that worked!' }));

    // The agent turns the chat into a ticket; the visitor sees a note.
    await agent.click('#make-ticket');
    await visible(agent.locator('#ticket-dialog'));
    const subject = await agent.inputValue('#ticket-subject');
    assert.match(subject, /Vera Visitor/);
    await agent.click('#ticket-submit');
    await visible(agent.locator('#thread-ticket', { hasText: 'TKT-' }));
    await visible(page.locator('.sd-msg-system', { hasText: /Ticket TKT-\d+ was created/ }));
    const tickets = await api('GET', '/tickets?limit=5');
    const ticket = tickets.data.find((t) => t.subject === subject);
    assert.ok(ticket, `the ticket exists: ${JSON.stringify(tickets.data)}`);
    assert.match(ticket.description, /Thanks, that worked!/);

    await shot(agent, 'agent-1-conversation');
    await shot(page, 'visitor-2-chat');
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
    await leaveConsole(ann, 'Ann Agent');
  }
});

test('the widget survives a dropped connection without losing a message (since)', async () => {
  let offline = false;
  const routes = [];
  const visitor = await openVisitor(`widgetKey=${WIDGET_KEY}`, {
    routeSockets: (ws) => {
      if (offline) {
        ws.close({ code: 1006 });
        return;
      }
      const server = ws.connectToServer();
      routes.push({ ws, server });
    },
  });
  const { page } = visitor;
  try {
    await startChat(page, { question: 'Is my invoice paid?', name: 'Otto Offline' });
    const { sessionId } = await conversation(page);
    const rex = await agentUser('Rex Reply', 'rex@northwind.test');
    await api('POST', `/chat/sessions/${sessionId}/messages`, {
      body: 'Let me check that for you.',
      senderType: 'agent',
      senderId: rex.id,
    });
    await visible(page.locator('.sd-msg-agent', { hasText: 'Let me check that for you.' }));

    // The connection drops; the agent keeps writing; the visitor too.
    offline = true;
    for (const { ws, server } of routes.splice(0)) {
      await server.close().catch(() => {});
      await ws.close({ code: 1006 }).catch(() => {});
    }
    await textIn(page, '#sd-conn', 'Reconnecting');
    for (const body of ['It was paid on the 3rd.', 'A receipt is on its way.']) {
      await api('POST', `/chat/sessions/${sessionId}/messages`, { body, senderType: 'agent', senderId: rex.id });
    }
    await page.fill('#sd-input', 'Great, thank you!');
    await page.press('#sd-input', 'Enter');
    await visible(page.locator('.sd-msg-visitor.is-pending', { hasText: 'Great, thank you!' }));
    await shot(page, 'visitor-3-reconnecting');

    // Back online: the missed messages are replayed, the queued one is sent.
    offline = false;
    await visible(page.locator('.sd-msg-agent', { hasText: 'A receipt is on its way.' }));
    await visible(page.locator('.sd-msg-agent', { hasText: 'It was paid on the 3rd.' }));
    await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: 'Great, thank you!' }));
    await textGone(page, '#sd-conn', 'Reconnecting');
    assert.equal(await page.locator('.sd-msg-agent', { hasText: 'Let me check that for you.' }).count(), 1, 'no duplicates');
    const bodies = await page.locator('#sd-messages .sd-bubble').allTextContents();
    assert.deepEqual(bodies, [
      'Is my invoice paid?',
      'Let me check that for you.',
      'It was paid on the 3rd.',
      'A receipt is on its way.',
      'Great, thank you!',
    ]);
    const stored = await api('GET', `/chat/sessions/${sessionId}`);
    assert.deepEqual(
      stored.messages.map((m) => m.body),
      bodies,
      'the widget shows exactly what the store holds',
    );

    // A reload rebuilds the conversation from the store; with the panel
    // closed, a new reply shows as unread on the launcher.
    await page.reload();
    await page.waitForFunction(() => document.querySelector('#sd-conn')?.dataset.status === 'open', null, {
      timeout: WAIT,
    });
    await api('POST', `/chat/sessions/${sessionId}/messages`, {
      body: 'Have a nice day!',
      senderType: 'agent',
      senderId: rex.id,
    });
    await textIn(page, '#sd-unread', '1');
    await textIn(page, '#sd-launcher-label', '1 unread');
    await page.click('#sd-launcher');
    await visible(page.locator('.sd-msg-agent', { hasText: 'Have a nice day!' }));
    assert.equal(await page.isVisible('#sd-unread'), false);
    assert.deepEqual(await page.locator('#sd-messages .sd-bubble').allTextContents(), [...bodies, 'Have a nice day!']);
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
  }
});

test('a message lost with the connection, on the way out or its reply on the way back, arrives exactly once', async () => {
  // What the next socket drops, then closes on: the visitor's frame with this
  // body before the server sees it, or the server's reply to it.
  let cut = null;
  const visitor = await openVisitor(`widgetKey=${WIDGET_KEY}`, {
    routeSockets: (ws) => {
      const server = ws.connectToServer();
      let dead = false;
      const drop = () => {
        dead = true;
        server.close().catch(() => {});
        ws.close({ code: 1006 }).catch(() => {});
      };
      const matches = (text, type, body) => {
        try {
          const frame = JSON.parse(String(text));
          return frame.type === type && (frame.body ?? frame.data?.body) === body;
        } catch {
          return false;
        }
      };
      ws.onMessage((text) => {
        if (dead) return;
        if (cut?.on === 'out' && matches(text, 'message', cut.body)) {
          cut = null;
          drop();
          return;
        }
        server.send(text);
      });
      server.onMessage((text) => {
        if (dead) return;
        if (cut?.on === 'back' && matches(text, 'chat.message', cut.body)) {
          cut = null;
          drop();
          return;
        }
        ws.send(text);
      });
    },
  });
  const { page } = visitor;
  try {
    await startChat(page, { question: 'Can I change my plan?', name: 'Lena Lost' });
    const { sessionId } = await conversation(page);
    const sent = [];
    for (const [on, body] of [
      ['out', 'Monthly billing now.'],
      ['back', 'Yearly billing later.'],
    ]) {
      cut = { on, body };
      await page.fill('#sd-input', body);
      await page.press('#sd-input', 'Enter');
      await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: body }));
      assert.equal(cut, null, `the connection was cut (${on})`);
      sent.push(body);
    }
    await page.waitForFunction(() => document.querySelector('#sd-conn')?.dataset.status === 'open', null, {
      timeout: WAIT,
    });
    const stored = await api('GET', `/chat/sessions/${sessionId}`);
    assert.deepEqual(
      stored.messages.map((m) => m.body),
      ['Can I change my plan?', ...sent],
      'each message stored once',
    );
    assert.deepEqual(await page.locator('#sd-messages .sd-bubble').allTextContents(), [
      'Can I change my plan?',
      ...sent,
    ]);
  } finally {
    await visitor.context.close();
  }
});

test('an agent reply whose answer was lost is sent again and stored once', async () => {
  // Created before the console opens, so its list has it from the start
  // (this test is about the resend, not about live session updates).
  const session = await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName: 'Rita Retry' });
  const kim = await signInAgent({ name: 'Kim Resend', email: 'kim@northwind.test' });
  const agent = kim.page;
  try {
    const item = agent.locator('#session-list .session', { hasText: 'Rita Retry' });
    await visible(item);
    await item.click();
    let posts = 0;
    await agent.route('**/api/v1/chat/sessions/*/messages', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      posts += 1;
      if (posts === 1) {
        // The service stores the reply, but its answer never reaches the console.
        await route.fetch();
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    const body = 'Checking your account now.';
    await agent.fill('#reply', body);
    await agent.press('#reply', 'Enter');
    await agent.waitForFunction(() => !document.querySelector('#reply-send')?.disabled, null, { timeout: WAIT });
    await visible(agent.locator('#messages .msg-agent', { hasText: body }));
    assert.equal(posts, 2, 'sent again after the lost answer');
    assert.equal(await agent.inputValue('#reply'), '', 'nothing left for the agent to send by hand');
    const stored = await api('GET', `/chat/sessions/${session.id}`);
    assert.deepEqual(
      stored.messages.map((m) => m.body),
      [body],
      'stored once',
    );
  } finally {
    await leaveConsole(kim, 'Kim Resend');
  }
});

test('an agent tags a chat with suggestions from the company\'s tags; the tags survive a reload', async () => {
  // Another record carries the tag the agent will pick from the
  // suggestions; the chat is created before the console opens.
  await api('POST', '/tickets', { subject: 'Gold customer', entityId: ENTITY_ID, tags: ['loyalty.gold'] });
  const session = await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName: 'Tina Tags' });
  const tess = await signInAgent({ name: 'Tess Tagger', email: 'tess@northwind.test' });
  const agent = tess.page;
  const tagsShown = () => agent.$$eval('#tag-list .tag', (items) => items.map((li) => li.dataset.tag));
  const openChat = async () => {
    const item = agent.locator('#session-list .session', { hasText: 'Tina Tags' });
    await visible(item);
    await item.click();
    await visible(agent.locator('#chat-tags'));
  };
  try {
    await openChat();
    assert.deepEqual(await tagsShown(), []);

    // Typing a prefix fills the suggestions from GET /tags; picking one
    // puts its value in the input, as choosing a <datalist> option does.
    await agent.fill('#tag-input', 'LOY');
    const suggestion = agent.locator('#tag-options option[value="loyalty.gold"]');
    await suggestion.waitFor({ state: 'attached', timeout: WAIT });
    await agent.fill('#tag-input', await suggestion.getAttribute('value'));
    await agent.press('#tag-input', 'Enter');
    await visible(agent.locator('#tag-list .tag[data-tag="loyalty.gold"]'));

    // A typed tag is normalised by the service; the list shows its answer.
    await agent.fill('#tag-input', ' Billing ');
    await agent.click('#tag-add');
    await visible(agent.locator('#tag-list .tag[data-tag="billing"]'));
    assert.deepEqual(await tagsShown(), ['billing', 'loyalty.gold']);
    await shot(agent, 'agent-chat-tags');

    await agent.click('#tag-list .tag[data-tag="billing"] .tag-remove');
    await agent.locator('#tag-list .tag[data-tag="billing"]').waitFor({ state: 'detached', timeout: WAIT });
    assert.deepEqual((await api('GET', `/chat/sessions/${session.id}`)).tags, ['loyalty.gold']);

    await agent.reload();
    await visible(agent.locator('#console'));
    await openChat();
    await visible(agent.locator('#tag-list .tag[data-tag="loyalty.gold"]'));
    assert.deepEqual(await tagsShown(), ['loyalty.gold']);
  } finally {
    await leaveConsole(tess, 'Tess Tagger');
  }
});

test('custom fields of a chat: one input per type, only changed keys saved, empty clears', async () => {
  // Definitions of every type (one for tickets only), and a chat that
  // already holds some values; the console edits them through the service.
  const definitions = [
    { key: 'order_id', label: 'Order', type: 'text', appliesTo: ['chat'] },
    { key: 'total', label: 'Total', type: 'number', appliesTo: ['ticket', 'chat'] },
    { key: 'vip', label: 'VIP', type: 'boolean', appliesTo: ['chat'] },
    { key: 'renewal', label: 'Renewal', type: 'date', appliesTo: ['chat'] },
    { key: 'callback', label: 'Call back', type: 'datetime', appliesTo: ['chat'] },
    { key: 'plan', label: 'Plan', type: 'select', appliesTo: ['chat'], options: ['free', 'pro'] },
    { key: 'topics', label: 'Topics', type: 'multiselect', appliesTo: ['chat'], options: ['billing', 'bugs', 'sales'] },
    { key: 'sla_note', label: 'SLA note', type: 'text', appliesTo: ['ticket'] },
  ];
  for (const definition of definitions) await api('POST', '/settings/custom-fields', definition);
  const session = await api('POST', '/chat/sessions', {
    entityId: ENTITY_ID,
    visitorName: 'Cora Fields',
    customFields: { order_id: 'A-1', plan: 'free', topics: ['bugs'] },
  });
  const patches = [];
  const fay = await signInAgent({ name: 'Fay Fields', email: 'fay@northwind.test' });
  const agent = fay.page;
  agent.on('request', (request) => {
    if (request.method() === 'PATCH' && request.url().endsWith(`/chat/sessions/${session.id}`)) {
      patches.push(request.postDataJSON());
    }
  });
  try {
    const item = agent.locator('#session-list .session', { hasText: 'Cora Fields' });
    await visible(item);
    await item.click();
    await visible(agent.locator('#chat-fields'));

    const typeOf = (selector) => agent.$eval(selector, (node) => (node.tagName === 'SELECT' ? `select${node.multiple ? '-multiple' : ''}` : node.type));
    assert.deepEqual(
      await Promise.all(['order_id', 'total', 'vip', 'renewal', 'callback', 'plan', 'topics'].map((key) => typeOf(`#cf-${key}`))),
      ['text', 'number', 'checkbox', 'date', 'datetime-local', 'select', 'select-multiple'],
    );
    assert.equal(await agent.locator('#cf-sla_note').count(), 0, 'ticket-only fields are not shown');
    assert.equal(await agent.inputValue('#cf-order_id'), 'A-1');
    assert.equal(await agent.inputValue('#cf-plan'), 'free');

    await agent.fill('#cf-order_id', '');
    await agent.fill('#cf-total', '99.5');
    await agent.check('#cf-vip');
    await agent.fill('#cf-renewal', '2026-12-31');
    await agent.selectOption('#cf-plan', 'pro');
    await agent.selectOption('#cf-topics', ['billing', 'sales']);
    await agent.click('#fields-save');
    await agent.waitForFunction(() => !document.querySelector('#fields-save')?.disabled, null, { timeout: WAIT });
    assert.deepEqual(patches, [
      {
        customFields: { order_id: null, total: 99.5, vip: true, renewal: '2026-12-31', plan: 'pro', topics: ['billing', 'sales'] },
      },
    ]);
    assert.deepEqual((await api('GET', `/chat/sessions/${session.id}`)).customFields, {
      plan: 'pro',
      renewal: '2026-12-31',
      topics: ['billing', 'sales'],
      total: 99.5,
      vip: true,
    });
    assert.equal(await agent.inputValue('#cf-order_id'), '');
    assert.equal(await agent.isChecked('#cf-vip'), true);
    await shot(agent, 'agent-chat-fields');
  } finally {
    await leaveConsole(fay, 'Fay Fields');
  }
});

test('agent presence appears and disappears in the widget; private agents never show', async () => {
  const visitor = await openVisitor(`widgetKey=${WIDGET_KEY}&poll=2`);
  const { page } = visitor;
  let pat;
  let bea;
  try {
    await page.click('#sd-launcher');
    await page.waitForFunction(() => document.querySelector('#sd-presence')?.dataset.online !== undefined, null, {
      timeout: WAIT,
    });
    await textGone(page, '#sd-presence-text', 'Bea Backup');

    pat = await signInAgent({ name: 'Pat Private', email: 'pat@northwind.test', visibility: 'PRIVATE' });
    bea = await signInAgent({ name: 'Bea Backup', email: 'bea@northwind.test', width: 1280, height: 800 });

    // Bea appears in the widget; Pat (private) never does.
    await textIn(page, '#sd-presence-text', 'Bea Backup is online');
    assert.equal(await page.getAttribute('#sd-presence', 'data-online'), 'true');
    assert.ok(!(await page.textContent('#sd-widget')).includes('Pat'), 'a private agent is never shown');

    // Agents see each other live, the private one marked as hidden.
    await visible(pat.page.locator('#team .team-member', { hasText: 'Bea Backup' }));
    await visible(bea.page.locator('#team .team-member', { hasText: 'Pat Private' }));
    await visible(bea.page.locator('#team .team-member', { hasText: 'Hidden' }));
    await shot(page, 'visitor-4-agent-online');
    await shot(pat.page, 'agent-2-team-presence');

    // Bea closes her console: offline at once (DELETE on leaving), in the
    // widget and in Pat's console.
    await bea.page.close({ runBeforeUnload: true });
    await textGone(page, '#sd-presence-text', 'Bea Backup');
    await textIn(page, '#sd-presence-text', 'away');
    assert.equal(await page.getAttribute('#sd-presence', 'data-online'), 'false');
    await pat.page.waitForFunction(
      () => ![...document.querySelectorAll('#team .team-member')].some((m) => m.textContent.includes('Bea Backup')),
      null,
      { timeout: WAIT },
    );
    const online = await api('GET', '/chat/agent-presence');
    assert.deepEqual(
      online.data.map((a) => a.name).sort(),
      ['Pat Private'],
      'only Pat is online after Bea left',
    );
    await shot(page, 'visitor-5-agents-away');
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
    await bea?.context.close();
    await pat?.page.close({ runBeforeUnload: true });
    await pat?.context.close();
  }
});

const CHAT_LINK = /https?:\/\/\S+\/demo\/visitor\.html#session=[0-9a-f-]+&token=[A-Za-z0-9_-]+/;

/** The newest link like `pattern` emailed to `to` (quoted-printable decoded). */
async function emailedLink(to, pattern = CHAT_LINK) {
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    const files = (await fs.readdir(MAIL_DIR).catch(() => [])).filter((f) => f.endsWith('.eml'));
    for (const file of files.sort().reverse()) {
      const raw = await fs.readFile(path.join(MAIL_DIR, file), 'utf8');
      if (!raw.includes(to)) continue;
      const decoded = raw
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
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
  assert.ok(link.startsWith(`${BASE}/demo/visitor.html#session=${started.id}&token=`), link);

  // A phone with nothing stored opens the link: the widget opens with the
  // conversation, and the token leaves the address bar.
  const visitor = await openVisitor(link, { width: 390, height: 844 });
  const { page } = visitor;
  try {
    await visible(page.locator('.sd-msg-agent', { hasText: 'Your refund was approved.' }));
    await textIn(page, '#sd-messages', 'Sam Support');
    assert.ok(!page.url().includes('token='), `the token left the address bar: ${page.url()}`);
    await page.fill('#sd-input', 'No, that is all. Thanks!');
    await page.press('#sd-input', 'Enter');
    await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: 'No, that is all.' }));
    const stored = await api('GET', `/chat/sessions/${started.id}`);
    assert.equal(stored.messages.at(-1).body, 'No, that is all. Thanks!');
    assert.equal(stored.messages.at(-1).senderType, 'visitor');
    await shot(page, 'visitor-6-mobile-from-email');
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
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

test('the demo leads to the shop, which links the agent console; the console refuses LIVE keys', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  try {
    await page.goto(`${BASE}/demo/`);
    await visible(page.locator(`a[href="${BASE}/demo/agent.html"]`));
    await page.click(`a[href="${BASE}/demo/agent.html"]`);
    await visible(page.locator('#api-key'));

    await page.goto(`${BASE}/demo/agent.html`);
    await page.fill('#api-key', `svc_live_${'x'.repeat(38)}`);
    await page.click('#key-submit');
    await textIn(page, '#key-error', 'TEST keys only');
    await page.fill('#api-key', `svc_test_${'x'.repeat(38)}`);
    await page.click('#key-submit');
    await textIn(page, '#key-error', 'refused');
    await shot(page, 'agent-0-sign-in');
  } finally {
    await context.close();
  }
});

// --- the Tickets view ----------------------------------------------------------

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
      batch.slice(at, at + 50).map((i) =>
        api('POST', '/tickets', { subject: `Bulk ticket ${String(i).padStart(4, '0')}`, entityId: ENTITY_ID }),
      ),
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

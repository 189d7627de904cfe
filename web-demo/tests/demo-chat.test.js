// Browser tests of the web demo's live chat (see run.sh; helpers in
// demo-support.js): a visitor and an agent chatting live, and the widget
// and the console keeping every message through dropped connections and
// lost answers, each exactly once.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { WIDGET_KEY, ENTITY_ID, WAIT, api, shot } from './support.js';
import {
  textIn,
  textGone,
  visible,
  signInAgent,
  leaveConsole,
  openVisitor,
  assertNoApiKey,
  startChat,
  conversation,
  agentUser,
  useBrowser,
} from './demo-support.js';

useBrowser();

before(async () => {
  // The knowledge base the widget suggests from: two published articles of
  // the entity and one draft (never suggested).
  for (const [title, content, isPublished] of [
    [
      'Reset your password',
      'Open **Settings**, then **Security**, and choose *Reset password*. We email you a link that is valid for one hour.',
      true,
    ],
    ['Set up two-factor authentication', 'Protect your account with an authenticator app: Settings, Security, Two-factor.', true],
    ['Password policy (draft)', 'Internal notes about password rules.', false],
  ]) {
    await api('POST', '/kb/articles', { title, content, isPublished, entityId: ENTITY_ID });
  }
});

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
    assert.deepEqual(await page.locator('#sd-messages .sd-bubble').allTextContents(), ['Can I change my plan?', ...sent]);
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

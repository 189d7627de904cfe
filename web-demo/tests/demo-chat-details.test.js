// Browser tests of what surrounds a chat in the web demo (see run.sh;
// helpers in demo-support.js): an agent's tags and custom fields on a
// chat, and agent presence as the widget shows it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WIDGET_KEY, ENTITY_ID, WAIT, api, shot } from './support.js';
import { textIn, textGone, visible, signInAgent, leaveConsole, openVisitor, assertNoApiKey, useBrowser } from './demo-support.js';

useBrowser();

test("an agent tags a chat with suggestions from the company's tags; the tags survive a reload", async () => {
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

    const typeOf = (selector) =>
      agent.$eval(selector, (node) => (node.tagName === 'SELECT' ? `select${node.multiple ? '-multiple' : ''}` : node.type));
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
    assert.deepEqual(online.data.map((a) => a.name).sort(), ['Pat Private'], 'only Pat is online after Bea left');
    await shot(page, 'visitor-5-agents-away');
    await assertNoApiKey(visitor);
  } finally {
    await visitor.context.close();
    await bea?.context.close();
    await pat?.page.close({ runBeforeUnload: true });
    await pat?.context.close();
  }
});

// Browser tests of the console's desktop notifications (see run.sh): the
// agent allows them from a click on "Desktop notifications" (the browser
// asks only from a user gesture), and a chat or a ticket assigned to them,
// or an internal note mentioning them, then shows a notification on the
// desktop. Chromium's own Notification is wrapped
// before the page loads, so the test reads what the page showed and asked.

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

/**
 * A context whose pages record every notification shown (title and body)
 * and every permission request (whether a user gesture was active then).
 */
async function recordingContext(options) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, ...options });
  await context.addInitScript(() => {
    const Real = window.Notification;
    window.shownNotices = [];
    window.permissionRequests = [];
    window.Notification = class extends Real {
      constructor(title, options) {
        super(title, options);
        window.shownNotices.push({ title, body: options?.body ?? '' });
      }

      static requestPermission() {
        window.permissionRequests.push({ gesture: navigator.userActivation.isActive });
        return Real.requestPermission();
      }
    };
  });
  return context;
}

test('"Desktop notifications" asks for the permission from the click, then goes away', async () => {
  const agent = await agentAccount({ name: 'Nia Notified', email: 'nia@notify.northwind.test', role: 'AGENT' });
  const context = await recordingContext();
  const page = await context.newPage();
  await signInConsole(page, { email: agent.email });
  const button = page.getByRole('button', { name: 'Desktop notifications' });
  await button.waitFor({ state: 'visible', timeout: WAIT });

  // The agent says yes in the browser's prompt.
  await context.grantPermissions(['notifications'], { origin: new URL(page.url()).origin });
  await button.click();
  await button.waitFor({ state: 'hidden', timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.permissionRequests), [{ gesture: true }]);
});

test('a chat assigned to the agent shows a desktop notification', async () => {
  const agent = await agentAccount({ name: 'Ned Notified', email: 'ned@notify.northwind.test', role: 'AGENT' });
  const context = await recordingContext({ permissions: ['notifications'] });
  const page = await context.newPage();
  await signInConsole(page, { email: agent.email });
  const chat = await api('POST', '/chat/sessions', { entityId: ENTITY_ID, visitorName: 'Olga Assigned' });

  await api('PATCH', `/chat/sessions/${chat.id}`, { assigneeId: agent.id });
  await page.waitForFunction(() => window.shownNotices.length > 0, null, { timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.shownNotices), [
    { title: 'Chat assigned to you', body: "Olga Assigned's chat was assigned to you." },
  ]);
  await shot(page, 'console-notify-assigned');
});

test('a ticket assigned to the agent shows a desktop notification', async () => {
  const agent = await agentAccount({ name: 'Tia Ticketed', email: 'tia@notify.northwind.test', role: 'AGENT' });
  const context = await recordingContext({ permissions: ['notifications'] });
  const page = await context.newPage();
  await signInConsole(page, { email: agent.email });
  const ticket = await api('POST', '/tickets', { subject: 'Parcel lost', description: 'Never came.', entityId: ENTITY_ID });

  await api('PATCH', `/tickets/${ticket.id}`, { assignedToId: agent.id });
  await page.waitForFunction(() => window.shownNotices.length > 0, null, { timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.shownNotices), [
    { title: 'Ticket assigned to you', body: `${ticket.ticketNumber}: Parcel lost` },
  ]);
});

test('an internal note mentioning the agent shows a desktop notification', async () => {
  const agent = await agentAccount({ name: 'Mo Mentioned', email: 'mo.mentioned@notify.northwind.test', role: 'AGENT' });
  const context = await recordingContext({ permissions: ['notifications'] });
  const page = await context.newPage();
  await signInConsole(page, { email: agent.email });
  const ticket = await api('POST', '/tickets', { subject: 'Refund question', description: 'Where is it?', entityId: ENTITY_ID });

  await api('POST', `/tickets/${ticket.id}/comments`, { body: '@mo.mentioned can you check the refund?', isInternal: true });
  await page.waitForFunction(() => window.shownNotices.length > 0, null, { timeout: WAIT });
  assert.deepEqual(await page.evaluate(() => window.shownNotices), [
    { title: 'Browser tests mentioned you', body: '@mo.mentioned can you check the refund?' },
  ]);
});

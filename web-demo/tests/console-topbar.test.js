// Browser tests of the console's top bar on a phone (see run.sh): 390 px
// wide, every control of the bar (the entity, the views, search, the
// shortcuts, the notifications bell, Team, the agent's status, Sign out) is
// within the screen, and Team opens the team panel below the bar.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { SHOTS, WAIT, agentAccount, agentsOffline, launchChromium, shot, signInConsole } from './support.js';

const WIDTH = 390;

let browser;
let page;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
  const agent = await agentAccount({ name: 'Phoebe Phone', email: 'phoebe@topbar.northwind.test' });
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 844 } });
  page = await context.newPage();
  await signInConsole(page, { email: agent.email });
});

after(async () => {
  await browser?.close();
  await agentsOffline();
});

test('at 390 px wide, every control of the top bar is within the screen', async () => {
  // The bell shows while the browser would still ask for the permission.
  await page.locator('#notify-button').waitFor({ state: 'visible', timeout: WAIT });
  const controls = await page.evaluate(() =>
    [...document.querySelectorAll('.topbar :is(a, button, select)')]
      .filter((node) => node.getClientRects().length > 0)
      .map((node) => {
        const box = node.getBoundingClientRect();
        return { name: node.id || node.textContent.trim() || node.getAttribute('aria-label'), left: box.left, right: box.right };
      }),
  );
  const names = controls.map((control) => control.name);
  for (const id of ['entity-select', 'view-tickets', 'search-button', 'notify-button', 'side-toggle', 'status-toggle', 'sign-out']) {
    assert.ok(names.includes(id), `${id} shows in the top bar: ${names.join(', ')}`);
  }
  const outside = controls.filter((control) => control.left < 0 || control.right > WIDTH);
  assert.deepEqual(outside, [], 'controls of the top bar beyond the screen');
  await shot(page, 'console-topbar-390');
});

test('at 390 px wide, Team opens the team panel below the top bar', async () => {
  await page.click('#side-toggle');
  await page.waitForFunction(() => getComputedStyle(document.querySelector('#side')).visibility === 'visible', null, { timeout: WAIT });
  const { barBottom, sideTop } = await page.evaluate(() => ({
    barBottom: document.querySelector('.topbar').getBoundingClientRect().bottom,
    sideTop: document.querySelector('#side').getBoundingClientRect().top,
  }));
  assert.ok(Math.abs(sideTop - barBottom) < 1, `the panel starts at ${sideTop}, the bar ends at ${barBottom}`);
  await shot(page, 'console-topbar-390-team');
  await page.click('#side-toggle');
});

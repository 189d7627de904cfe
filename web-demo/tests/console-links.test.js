// Browser tests of the console's pages for the links the service emails (see
// run.sh): an admin invites an agent through the API, and the agent opens
// the emailed link, chooses a password and lands in the console signed in;
// a reset link sets a new password that then signs in; a used link shows
// the API's refusal. The links are read from the emails the service writes
// to its mail folder.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BASE, SHOTS, WAIT, agentAccount, agentsOffline, apiSession, launchChromium, shot, signInConsole } from './support.js';

const MAIL_DIR = process.env.SD_MAIL_DIR;
const NEW_PASSWORD = 'chosen-by-the-agent-42';

let browser;
let admin;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
  browser = await launchChromium();
  admin = await agentAccount({ name: 'Ivy Inviter', email: 'ivy@links.northwind.test' });
});

after(async () => {
  await browser?.close();
  await agentsOffline();
});

/** The newest link to the console page `page` emailed to `to` (quoted-printable decoded). */
async function emailedLink(to, page) {
  const pattern = new RegExp(`https?://\\S+/app/${page}#token=[A-Za-z0-9_-]+`);
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    const files = (await fs.readdir(MAIL_DIR).catch(() => [])).filter((f) => f.endsWith('.eml'));
    for (const file of files.sort().reverse()) {
      const raw = await fs.readFile(path.join(MAIL_DIR, file), 'utf8');
      if (!raw.includes(to)) continue;
      const decoded = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
      const link = decoded.match(pattern);
      if (link) return link[0];
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no email with a link to /app/${page} to ${to} in ${MAIL_DIR}`);
}

/** An agent the admin invites through the API; the link of their invitation. */
async function invite(name, email) {
  const session = await apiSession(admin.email);
  await session.call('POST', '/users', { name, email, role: 'AGENT', invite: true });
  return emailedLink(email, 'accept-invitation');
}

async function newPage(width = 1440) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  return context.newPage();
}

/** Fills the link page's form with `password` (twice) and sends it. */
async function choosePassword(page, password) {
  await page.locator('#link-form').waitFor({ state: 'visible', timeout: WAIT });
  await page.fill('#link-password', password);
  await page.fill('#link-repeat', password);
  await page.click('#link-submit');
}

test('an invited agent opens the emailed link, chooses a password and lands in the console signed in', async () => {
  const link = await invite('Ines Invited', 'ines@links.northwind.test');
  const page = await newPage();
  await page.goto(link);
  await choosePassword(page, NEW_PASSWORD);

  await page.locator('#console').waitFor({ state: 'visible', timeout: WAIT });
  await page.waitForFunction(() => document.querySelector('#conn-text')?.textContent.includes('Live'), null, { timeout: WAIT });
  assert.match(await page.textContent('#me-email'), /^ines@links\.northwind\.test\b/);
  // The spent link leaves the address bar.
  assert.equal(new URL(page.url()).pathname, '/app/');
  await shot(page, 'console-invitation-accepted');
  // Signing out takes the agent offline (their session is LIVE, which the
  // tests' TEST key does not reach).
  await page.click('#sign-out');
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });
});

test('a reset link sets a new password, which then signs in', async () => {
  const agent = await agentAccount({ name: 'Remy Reset', email: 'remy@links.northwind.test', role: 'AGENT' });
  const asked = await fetch(`${BASE}/api/v1/auth/password-reset`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: agent.email }),
  });
  assert.equal(asked.status, 202);
  const page = await newPage();
  await page.goto(await emailedLink(agent.email, 'reset-password'));
  await choosePassword(page, NEW_PASSWORD);
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.textContent('#signin-notice'), 'Your new password is set: sign in with it.');
  await shot(page, 'console-password-reset');

  await signInConsole(page, { email: agent.email, password: NEW_PASSWORD });
  assert.ok((await page.textContent('#me-email')).startsWith(agent.email));
});

test("a used invitation link shows the API's refusal and signs no one in", async () => {
  const link = await invite('Uma Used', 'uma@links.northwind.test');
  const token = new URLSearchParams(new URL(link).hash.slice(1)).get('token');
  const accepted = await fetch(`${BASE}/api/v1/auth/invitations/accept`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token, password: NEW_PASSWORD }),
  });
  assert.equal(accepted.status, 200);

  const page = await newPage();
  await page.goto(link);
  await choosePassword(page, 'another-password-77');
  const error = page.locator('#link-error');
  await error.waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await error.textContent(), 'The link is unknown, used or expired; ask for a new one');
  assert.equal(await page.locator('#console').isVisible(), false);
  await shot(page, 'console-link-used');
});

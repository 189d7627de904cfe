// Browser tests of signing in to the agent console at /app/ (see run.sh):
// agents sign in as themselves — with a password, with a password and a
// TOTP code, or through their company's SSO against a real OpenID provider
// (tests/oidc) — each in a browser of their own, and each sees their own
// name on what they did; a session that ends sends the agent back to the
// sign-in with the reply they were typing kept.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  BASE,
  PASSWORD,
  ENTITY_ID,
  SHOTS,
  WAIT,
  agentAccount,
  agentsOffline,
  api,
  apiSession,
  launchChromium,
  shot,
  signInConsole,
  totpCode,
} from './support.js';

const OIDC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/oidc');
const CLIENT_ID = 'supportdesk-console';
const CLIENT_SECRET = 'browser-tests-client-secret';
const SSO_SLUG = 'northwind-console';

/** Each agent's browser: three Chromium processes, nothing shared. */
const browsers = [];
let provider;

before(async () => {
  await fs.mkdir(SHOTS, { recursive: true });
});

after(async () => {
  await Promise.all(browsers.map((b) => b.close()));
  provider?.kill('SIGTERM');
  await agentsOffline();
});

// --- helpers -------------------------------------------------------------------

/** A page in a browser of its own. */
async function ownBrowserPage() {
  const browser = await launchChromium();
  browsers.push(browser);
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  return context.newPage();
}

/** oidc-provider with the service as its client; answers its issuer URL. */
async function startProvider() {
  provider = spawn('node', ['provider.mjs'], {
    cwd: OIDC_DIR,
    env: {
      ...process.env,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_REDIRECT_URI: `${BASE}/api/v1/auth/sso/callback`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: provider.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve);
    provider.once('exit', (code) => reject(new Error(`the OpenID provider exited (${code})`)));
  });
  // Keep reading: a full pipe would stall the provider.
  lines.on('line', () => {});
  return JSON.parse(first).issuer;
}

/** Signs in through the company's SSO: the provider's own sign-in and consent pages. */
async function signInWithSso(page, slug, login) {
  await page.goto(`${BASE}/app/`);
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });
  await page.setChecked('#login-test', false);
  await page.click('#sso-show');
  await page.fill('#sso-slug', slug);
  await page.click('#sso-submit');
  // oidc-provider's development interactions: a sign-in form, then consent.
  await page.locator('input[name="login"]').waitFor({ state: 'visible', timeout: WAIT });
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
  await page.locator('button[type="submit"]', { hasText: /continue/i }).click({ timeout: WAIT });
  await page.waitForURL(`${BASE}/app/`, { timeout: WAIT });
  await page.locator('#console').waitFor({ state: 'visible', timeout: WAIT });
}

/** Opens ticket `ticket` in the console's Tickets view. */
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

/** Posts a comment (or an internal note) from the ticket page. */
async function comment(page, text, { internal = false } = {}) {
  await page.fill('#td-reply', text);
  await page.setChecked('#td-internal', internal);
  await page.click('#td-send');
}

/** The timeline entry of `text` by `user` (their id on it), its head naming them. */
async function seesOwnName(page, text, user) {
  const entry = page.locator(`#td-timeline li[data-author-id="${user.id}"]`, { hasText: text });
  await entry.first().waitFor({ state: 'visible', timeout: WAIT });
  const head = await entry.first().locator('.entry-head').textContent();
  assert.ok(head.includes(user.name), `"${head}" names ${user.name}`);
}

// --- the tests ----------------------------------------------------------------------

test('three agents in three browsers — a password, a password with TOTP, SSO — each see their own name on what they did', async () => {
  const ada = await agentAccount({ name: 'Ada Password', email: 'ada@signin.northwind.test', role: 'AGENT' });
  const tom = await agentAccount({ name: 'Tom Totp', email: 'tom@signin.northwind.test', role: 'AGENT' });
  const cleo = await agentAccount({ name: 'Cleo Sso', email: 'cleo@signin.northwind.test', role: 'AGENT' });

  // Tom turns two-factor on (as he would from his settings): the code from
  // the secret the setup answers. His browser later signs in with the code
  // of the next step (the confirmed step is used up; one step of skew is
  // allowed).
  const tomApi = await apiSession(tom.email);
  const { secret } = await tomApi.call('POST', '/auth/totp/setup');
  await tomApi.call('POST', '/auth/totp/confirm', { code: totpCode(secret, Date.now() / 1000) });

  // The company's SSO, against the real provider.
  const issuer = await startProvider();
  await api('PUT', '/settings/sso', { slug: SSO_SLUG, issuerUrl: issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });

  // A LIVE ticket (SSO sessions work on live data), made by Ada's session.
  const adaApi = await apiSession(ada.email);
  const tag = 'three-agents';
  const ticket = await adaApi.call('POST', '/tickets', {
    subject: 'Three agents, one ticket',
    priority: 'HIGH',
    tags: [tag],
    entityId: ENTITY_ID,
  });

  const adaPage = await ownBrowserPage();
  await signInConsole(adaPage, { email: ada.email, test: false });
  const tomPage = await ownBrowserPage();
  await signInConsole(tomPage, { email: tom.email, test: false, totp: () => totpCode(secret, Date.now() / 1000 + 30) });
  const cleoPage = await ownBrowserPage();
  await signInWithSso(cleoPage, SSO_SLUG, cleo.email);

  // Each console names its own agent and role.
  for (const [page, user] of [
    [adaPage, ada],
    [tomPage, tom],
    [cleoPage, cleo],
  ]) {
    assert.equal(await page.textContent('#me-name'), user.name);
    assert.match(await page.textContent('#me-role'), /Agent/);
  }

  await openTicket(adaPage, ticket, tag);
  await comment(adaPage, 'Ada: we are on it.');
  await seesOwnName(adaPage, 'Ada: we are on it.', ada);

  await openTicket(tomPage, ticket, tag);
  await comment(tomPage, 'Tom: checked the order, it shipped.', { internal: true });
  await seesOwnName(tomPage, 'Tom: checked the order, it shipped.', tom);

  await openTicket(cleoPage, ticket, tag);
  await comment(cleoPage, 'Cleo: tracking number sent.');
  await seesOwnName(cleoPage, 'Cleo: tracking number sent.', cleo);
  await cleoPage.selectOption('#td-status', 'PENDING');
  const change = cleoPage.locator(`#td-timeline li.entry-activity[data-type="status_changed"][data-actor-id="${cleo.id}"]`);
  await change.first().waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await change.first().textContent(), /by Cleo Sso \(you\)/);

  // The service names each of them as the author, whoever's browser reads it.
  const comments = await adaApi.call('GET', `/tickets/${ticket.id}/comments?limit=100`);
  assert.deepEqual(
    comments.data.map((c) => c.author?.name),
    ['Ada Password', 'Tom Totp', 'Cleo Sso'],
  );
  await shot(adaPage, 'console-sign-in-three-agents-ada');
  await shot(tomPage, 'console-sign-in-three-agents-tom');
  await shot(cleoPage, 'console-sign-in-three-agents-cleo');

  // No API key in any of the three browsers: only the session cookie.
  for (const page of [adaPage, tomPage, cleoPage]) {
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
    assert.doesNotMatch(stored, /svc_(test|live)_/);
  }
});

test('a session that ends sends the agent back to sign in, and the reply being typed is kept', async () => {
  const dana = await agentAccount({ name: 'Dana Draft', email: 'dana@signin.northwind.test' });
  const tag = 'draft-kept';
  const ticket = await api('POST', '/tickets', { subject: 'Keep my draft', priority: 'LOW', tags: [tag], entityId: ENTITY_ID });
  const page = await ownBrowserPage();
  await signInConsole(page, { email: dana.email });
  await openTicket(page, ticket, tag);
  const draft = 'A long answer the agent is still typing…';
  await page.fill('#td-reply', draft);

  // Her session ends (she ended her other sessions from another device).
  const other = await apiSession(dana.email, 'test');
  await other.call('DELETE', '/auth/sessions');

  // The next call is refused: back to the sign-in, saying why. (The
  // console may have learned it already from its socket, closed with the
  // session: then the send does nothing.)
  await page.evaluate(() => document.querySelector('#td-send').click());
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await page.textContent('#signin-notice'), /session ended/);
  await shot(page, 'console-session-ended');

  await page.fill('#login-password', PASSWORD);
  await page.click('#login-submit');
  await page.locator('#console').waitFor({ state: 'visible', timeout: WAIT });
  await openTicket(page, ticket, tag);
  assert.equal(await page.inputValue('#td-reply'), draft);

  // Sent now, the draft is gone.
  await page.click('#td-send');
  await page.locator('#td-timeline .entry-comment', { hasText: draft }).first().waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('sd-draft')).length), 0);
});

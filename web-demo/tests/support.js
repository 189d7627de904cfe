// What every browser test file shares (see run.sh, which starts the service
// and sets the SD_* variables): the settings, the REST API with the test key,
// screenshots, and a headless Chromium.

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { chromium } from 'playwright-core';

export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through run.sh`);
  return value;
}

export const BASE = env('SD_BASE_URL');
export const API_KEY = env('SD_API_KEY');
export const WIDGET_KEY = env('SD_WIDGET_KEY');
export const ENTITY_ID = env('SD_ENTITY_ID');
export const COMPANY_ID = env('SD_COMPANY_ID');
/** The service binary, for its CLI (it opens the same database). */
export const BIN = env('SD_BIN');
/** Every agent of the browser tests signs in with this password. */
export const PASSWORD = 'browser-tests-Pa55word';
export const SHOTS = process.env.SD_SCREENSHOTS ?? path.resolve('screenshots');
/** Generous: the machine may be busy; every wait polls, none sleeps blindly. */
export const WAIT = 25_000;

/** The REST API with the TEST key, as a server would call it. */
export async function api(method, urlPath, body) {
  const response = await fetch(`${BASE}/api/v1${urlPath}`, {
    method,
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Debian's Chromium, headless, without the sandbox (no user namespaces here). */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Sets `email`'s password with the CLI (as an admin would). */
export function setPassword(email, password = PASSWORD) {
  execFileSync(BIN, ['users', 'reset-password', '--company', COMPANY_ID, '--email', email], {
    input: `${password}\n`,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
}

/**
 * A user of the company who can sign in with `PASSWORD`: made through the
 * API (an admin, unless `role` says otherwise) unless one has the email
 * already, then given the password. Answers the user.
 */
export async function agentAccount({ name, email, role = 'ADMIN' }) {
  const response = await fetch(`${BASE}/api/v1/users`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, email, role }),
  });
  let user;
  if (response.status === 409) {
    const users = await api('GET', '/users?limit=100');
    user = users.data.find((u) => u.email === email.toLowerCase());
  } else if (response.ok) {
    user = await response.json();
  } else {
    throw new Error(`POST /users: ${response.status} ${await response.text()}`);
  }
  setPassword(email);
  return user;
}

/**
 * Signs in to the console at /app/ in `page` with email and password (on
 * TEST data unless `test` is false, with a code when `totp` gives one), and
 * waits until the console is live.
 */
export async function signInConsole(page, { email, password = PASSWORD, test = true, visibility = 'PUBLIC', totp }) {
  await page.goto(`${BASE}/app/`);
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });
  await page.fill('#login-email', email);
  await page.fill('#login-password', password);
  await page.selectOption('#agent-visibility', visibility);
  await page.setChecked('#login-test', test);
  await page.click('#login-submit');
  if (totp) {
    await page.locator('#totp-form').waitFor({ state: 'visible', timeout: WAIT });
    await page.fill('#totp-code', typeof totp === 'function' ? totp() : totp);
    await page.click('#totp-submit');
  }
  await page.locator('#console').waitFor({ state: 'visible', timeout: WAIT });
  await page.waitForFunction(() => document.querySelector('#conn-text')?.textContent.includes('Live'), null, {
    timeout: WAIT,
  });
  const me = await page.evaluate(() => fetch('/api/v1/auth/me').then((response) => response.json()));
  signedIn.add(me.user.id);
}

/** Every agent this file's tests signed in to the console (user ids). */
const signedIn = new Set();

/**
 * Takes every agent this file signed in offline: a console closed with its
 * browser never says it left, and its presence would outlive the file by
 * half a minute, visible to the next file's visitors and agents. Call it in
 * the file's `after`, once the browsers are closed (no heartbeat left).
 */
export async function agentsOffline() {
  for (const userId of signedIn) {
    await api('DELETE', `/chat/agent-presence/${userId}`);
  }
  signedIn.clear();
}

/** The bytes of a base32 (RFC 4648) text. */
function base32Bytes(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of text.replace(/=+$/, '').toUpperCase()) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238: the six-digit TOTP (HMAC-SHA-1, 30-s steps) of `secret` at `unixSeconds`. */
export function totpCode(secret, unixSeconds) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(unixSeconds / 30)));
  const mac = crypto.createHmac('sha1', base32Bytes(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/**
 * A session of `email` opened from node (not a browser): its cookie and
 * CSRF token, and `call` to use it.
 */
export async function apiSession(email, mode = 'live') {
  const response = await fetch(`${BASE}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, mode }),
  });
  if (response.status !== 200) throw new Error(`sign-in of ${email}: ${response.status} ${await response.text()}`);
  const cookie = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const me = await response.json();
  const call = async (method, urlPath, body) => {
    const answer = await fetch(`${BASE}/api/v1${urlPath}`, {
      method,
      headers: { Cookie: cookie, 'X-CSRF-Token': me.csrfToken, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`${method} ${urlPath}: ${answer.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return { me, call };
}

// What the web demo's test files share (demo-*.test.js; the settings and
// the REST API come from support.js): this file's Chromium, and the people
// of a test: agents signed in to the console, visitors whose pages are
// recorded so that no API key may reach them.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before } from 'node:test';
import { API_KEY, BASE, SHOTS, WAIT, agentAccount, agentsOffline, api, launchChromium, signInConsole } from './support.js';

const API_KEY_PATTERN = /svc_(test|live)_[A-Za-z0-9]{8,}/;

let browser;

/**
 * Opens a headless Chromium before the calling file's tests and closes it
 * after them (each test file runs in its own process, with its own).
 */
export function useBrowser() {
  before(async () => {
    await fs.mkdir(SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await agentsOffline();
  });
}

/** A browser context of its own: one per person, so they share nothing. */
export function newContext(options) {
  return browser.newContext(options);
}

/** Waits until the element's text contains `text`. */
export async function textIn(page, selector, text) {
  await page.waitForFunction(([sel, expected]) => document.querySelector(sel)?.textContent.includes(expected), [selector, text], {
    timeout: WAIT,
  });
}

/** Waits until the element's text no longer contains `text`. */
export async function textGone(page, selector, text) {
  await page.waitForFunction(
    ([sel, unexpected]) => !(document.querySelector(sel)?.textContent ?? '').includes(unexpected),
    [selector, text],
    { timeout: WAIT },
  );
}

export async function visible(locator) {
  await locator.first().waitFor({ state: 'visible', timeout: WAIT });
}

/**
 * An agent console in its own browser context, signed in with a password
 * (the agent made first if new) and online.
 */
export async function signInAgent({ name, email, visibility = 'PUBLIC', width = 1440, height = 900 }) {
  await agentAccount({ name, email });
  const context = await newContext({ viewport: { width, height } });
  const page = await context.newPage();
  await signInConsole(page, { email, visibility });
  return { context, page };
}

/**
 * Closes an agent's console at the end of a test. Leaving sends a
 * best-effort DELETE of its presence, which a page closed mid-request can
 * lose; the next test counts who is online, so make sure this agent is not.
 */
export async function leaveConsole(agent, name) {
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
export async function openVisitor(hash, { width = 1280, height = 800, routeSockets } = {}) {
  const context = await newContext({ viewport: { width, height } });
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
export async function assertNoApiKey({ page, seen }) {
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

export async function startChat(page, { question, name, email }) {
  await page.click('#sd-launcher');
  await visible(page.locator('#sd-view-start'));
  await page.fill('#sd-question', question);
  if (name) await page.fill('#sd-name', name);
  if (email) await page.fill('#sd-email', email);
  await page.click('#sd-start');
  await visible(page.locator('.sd-msg-visitor:not(.is-pending)', { hasText: question }));
}

export async function conversation(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('sd-widget-conversation') ?? 'null'));
}

export async function agentUser(name, email) {
  return api('POST', '/users', { name, email, role: 'AGENT' });
}

// What every browser test file shares (see run.sh, which starts the service
// and sets the SD_* variables): the settings, the REST API with the test key,
// screenshots, and a headless Chromium.

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

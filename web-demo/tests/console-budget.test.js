// Browser test of the console's weight (see run.sh): the JavaScript and CSS
// a first load of /app/ fetches (the sign-in page, which imports the whole
// console's modules) stay within 250 KB compressed. Each file is counted
// gzipped (level 9, as a compressing proxy or CDN would serve it); the
// totals are reported as the test's diagnostics.

import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { BASE, WAIT, launchChromium } from './support.js';

/** The budget of the issue: 250 KB of compressed JavaScript and CSS. */
const BUDGET = 250 * 1024;

let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

test('the first load of /app/ fetches at most 250 KB of compressed JavaScript and CSS', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const bodies = [];
  page.on('response', (response) => {
    const type = response.request().resourceType();
    if (type === 'script' || type === 'stylesheet') bodies.push(response.body().then((body) => ({ url: response.url(), body })));
  });
  await page.goto(`${BASE}/app/`, { waitUntil: 'networkidle' });
  await page.locator('#login-form').waitFor({ state: 'visible', timeout: WAIT });

  const files = await Promise.all(bodies);
  const raw = files.reduce((sum, file) => sum + file.body.length, 0);
  const gzipped = files.reduce((sum, file) => sum + gzipSync(file.body, { level: 9 }).length, 0);
  t.diagnostic(`first load of /app/: ${files.length} JS and CSS files, ${raw} bytes, ${gzipped} bytes gzipped (budget ${BUDGET})`);
  assert.ok(files.length > 0, 'the page loaded scripts and styles');
  assert.ok(gzipped <= BUDGET, `${gzipped} bytes gzipped, over the budget of ${BUDGET}`);
});

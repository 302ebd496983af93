// The browser the page tests share, and the helpers that drive it as a person
// would: open the page, served or saved and offline, in a fresh context
// (failing on any console error or uncaught exception), wait for what it
// shows, read its text. The page's CSP forbids the eval that Playwright's
// waitForFunction needs, so waiting polls from Node.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { ROOT, savedPagePath } from './data.mjs';

export const BASE = (process.env.SNOWFLAKE_URL || '').replace(/\/+$/, '');
if (!BASE) throw new Error('SNOWFLAKE_URL is not set; run scripts/browser-test');
export const SAVED = savedPagePath();
export const ARTIFACTS = process.env.ARTIFACTS_DIR || path.join(ROOT, 'artifacts');
const AXE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WAIT_MS = 10_000;
export const TEST = { timeout: 120_000 };

let browser;

/** Launches Debian's Chromium before the file's tests and closes it after. */
export function useBrowser() {
  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
  });
}

// A fresh context (own storage) and page; console errors and uncaught
// exceptions are collected and must be none when the test ends.
export async function open(t, { query = '', url = null, ready = true, ...contextOptions } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC', ...contextOptions });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  t.after(() => context.close());
  await page.goto(url || `${BASE}/${query}`);
  if (ready) await waitFor(page, '#result', (node) => node.dataset.state === 'ok', 'a result');
  return { page, context, assertNoErrors: () => assert.deepEqual(errors, [], 'console errors or uncaught exceptions') };
}

// The saved page from file:// in a fresh context with the network off and
// every http(s) request refused; `assertOffline` checks that the page has
// asked for nothing but files.
export async function openSaved(t, query = '') {
  const requests = [];
  const { page, context, assertNoErrors } = await open(t, { url: 'about:blank', ready: false, offline: true });
  page.on('request', (r) => requests.push(r.url()));
  await context.route(/^https?:/, (route) => route.abort());
  await page.goto(`${pathToFileURL(SAVED).href}${query}`);
  const assertOffline = () => assert.deepEqual(requests.filter((u) => !u.startsWith('file:')), [], 'requests from the saved page');
  return { page, assertNoErrors, assertOffline };
}

// Polls from Node: the page's CSP forbids the eval that waitForFunction needs.
export async function until(page, check, what) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    let seen;
    try {
      seen = await check();
      if (seen === true) return;
    } catch (error) {
      seen = error.message.split('\n')[0];
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(seen)}`);
    await page.waitForTimeout(25);
  }
}

export async function waitFor(page, selector, predicate, what) {
  await until(page, async () => (await page.$eval(selector, predicate)) || (await page.$eval(selector, (n) => n.outerHTML.slice(0, 300))), `${selector} to show ${what}`);
}

export async function waitText(page, selector, expected) {
  await until(
    page,
    async () => {
      const now = (await page.locator(selector).first().textContent()).trim();
      return (expected instanceof RegExp ? expected.test(now) : now === expected) || now;
    },
    `${selector} to read ${expected}`,
  );
}

export async function text(page, selector) {
  return ((await page.locator(selector).first().textContent({ timeout: WAIT_MS })) || '').trim();
}

// The text of a fact in the result, found by its term ("Hexadecimal").
export async function fact(page, term) {
  const dd = page.locator('#result-facts > div').filter({ has: page.locator('dt', { hasText: term }) }).locator('dd code, dd:not(:has(code))');
  return ((await dd.first().textContent()) || '').trim();
}

export async function axe(page, what) {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`);
  });
  assert.deepEqual(result, [], `axe violations in ${what}`);
}

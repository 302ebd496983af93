// The web page in a real browser (Debian's Chromium, driven by playwright-core)
// against a running server: the worked example, errors beside their field,
// decoding, other layouts, generating, German, share links, the keyboard, a
// phone-sized screen, and no console error anywhere.
//
// Run by scripts/browser-test, which starts the server and sets SNOWFLAKE_URL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const BASE = (process.env.SNOWFLAKE_URL || '').replace(/\/+$/, '');
if (!BASE) throw new Error('SNOWFLAKE_URL is not set; run scripts/browser-test');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = process.env.ARTIFACTS_DIR || path.resolve(HERE, '../../../../artifacts');
const WAIT_MS = 10_000;
const TEST = { timeout: 60_000 };

const EXAMPLE = { timestamp: '1288834975657', datacenter: '1', machine: '1', sequence: '0' };
const EXAMPLE_QUERY = '?layout=twitter&timestamp=1288834975657&datacenter=1&machine=1&sequence=0';

let browser;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  // chromium.launch gives every run a fresh temporary user-data-dir.
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
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
});

after(async () => {
  await browser?.close();
});

// Chromium reports every 4xx response on the console. A test that types bad
// input on purpose expects the API's 400s; any other error, and any uncaught
// exception, is a failure.
function isExpectedBadRequest(message) {
  return (
    message.text().startsWith('Failed to load resource: the server responded with a status of 400') &&
    message.location().url.startsWith(`${BASE}/api/v1/`)
  );
}

// A fresh context (own storage, own language) and page for one test; its
// console errors are collected and checked when the test ends.
async function open(t, { query = '', badRequests = false, ...contextOptions } = {}) {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: 'en-US',
    timezoneId: 'UTC',
    ...contextOptions,
  });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (badRequests && isExpectedBadRequest(message)) return;
    errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  t.after(() => context.close());
  await page.goto(`${BASE}/${query}`);
  await waitFor(page, '#result', (node) => node.dataset.state === 'ok', 'a result');
  return {
    page,
    context,
    assertNoErrors: () => assert.deepEqual(errors, [], 'console errors or uncaught exceptions'),
  };
}

// Polls from Node rather than with page.waitForFunction: the page's CSP
// forbids eval, and a plain $eval is not subject to it.
async function until(page, check, what) {
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
    await page.waitForTimeout(50);
  }
}

// Waits until predicate(element) is true for the first element matching selector.
async function waitFor(page, selector, predicate, what) {
  await until(
    page,
    async () => (await page.$eval(selector, predicate)) || (await page.$eval(selector, (n) => n.outerHTML.slice(0, 300))),
    `${selector} to show ${what}`,
  );
}

// Waits until the element's trimmed text equals `expected` (or matches a RegExp).
async function waitText(page, selector, expected) {
  await until(
    page,
    async () => {
      const now = (await page.$eval(selector, (n) => n.textContent)).trim();
      return (expected instanceof RegExp ? expected.test(now) : now === expected) || now;
    },
    `${selector} to read ${expected}`,
  );
}

async function text(page, selector) {
  return ((await page.locator(selector).first().textContent({ timeout: WAIT_MS })) || '').trim();
}

async function labelOf(page, inputId) {
  return text(page, `label[for="${inputId}"]`);
}

async function composeExample(page) {
  for (const [name, value] of Object.entries(EXAMPLE)) await page.fill(`#input-${name}`, value);
  await waitText(page, '#result-id', '4194439168');
}

async function segments(page) {
  return page.$$eval('#bits .segment', (nodes) =>
    nodes.map((node) => ({
      name: node.dataset.name,
      bits: Number(node.dataset.bits),
      value: node.querySelector('.segment-value').textContent.trim(),
      binary: node.querySelector('.segment-binary').textContent.trim(),
    })),
  );
}

test('composes the worked example into 4194439168 with its segments', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t);

  assert.equal(await labelOf(page, 'input-timestamp'), 'Timestamp (ms)');
  assert.equal(await labelOf(page, 'input-datacenter'), 'Datacenter ID');
  assert.equal(await labelOf(page, 'input-machine'), 'Machine ID');
  assert.equal(await labelOf(page, 'input-sequence'), 'Sequence');
  assert.match(await text(page, '#hint-machine'), /0 to 31/);
  assert.match(await text(page, '#hint-sequence'), /0 to 4,095/);
  assert.deepEqual(
    await page.$$eval('#layout option', (options) => options.map((o) => o.value)),
    ['twitter', 'discord', 'instagram', 'sonyflake', 'mastodon'],
  );

  await composeExample(page);
  assert.equal(await text(page, '#result-hex'), '0xfa021000');
  assert.equal(await text(page, '#result-time'), '2010-11-04T01:42:55.657Z');

  const parts = await segments(page);
  assert.deepEqual(
    parts.map(({ name, bits }) => [name, bits]),
    [['sign', 1], ['timestamp', 41], ['datacenter', 5], ['machine', 5], ['sequence', 12]],
  );
  const part = Object.fromEntries(parts.map((p) => [p.name, p]));
  assert.equal(part.machine.binary, '00001');
  assert.equal(part.machine.value, '1');
  assert.equal(part.timestamp.value, '1000');
  assert.equal(part.datacenter.binary, '00001');
  assert.equal(part.sequence.binary, '000000000000');
  const binary = parts.map((p) => p.binary).join('');
  assert.equal(binary.length, 64);
  assert.equal(BigInt(`0b${binary}`).toString(), '4194439168');
  assert.equal(await page.locator('.segment[data-name="machine"]').isVisible(), true);

  // Enter submits at once, without waiting for the debounce.
  await page.fill('#input-sequence', '5');
  await page.press('#input-sequence', 'Enter');
  await waitText(page, '#result-id', '4194439173');

  const share = await page.inputValue('#share-link');
  const params = new URL(share).searchParams;
  assert.equal(params.get('layout'), 'twitter');
  assert.equal(params.get('timestamp'), '1288834975657');
  assert.equal(params.get('machine'), '1');
  assert.equal(params.get('sequence'), '5');
  assert.equal(params.get('lang'), 'en');

  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  await page.click('#copy-id');
  await waitText(page, '#copy-status', 'Copied to the clipboard.');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '4194439173');
  assertNoErrors();
});

test('shows an out-of-range value beside its field, in the API words', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t, { badRequests: true });
  await composeExample(page);

  await page.fill('#input-machine', '32');
  await waitText(page, '#error-machine', /out of range: 0 to 31 \(5 bits\)/);
  assert.equal(await page.isVisible('#error-machine'), true);
  assert.equal(await page.getAttribute('#input-machine', 'aria-invalid'), 'true');
  assert.match(await page.getAttribute('#input-machine', 'aria-describedby'), /\berror-machine\b/);
  // The other fields are not blamed, and the last good ID stays on screen.
  assert.equal(await page.isVisible('#error-datacenter'), false);
  assert.equal(await text(page, '#result-id'), '4194439168');
  assert.equal(await page.isVisible('#result-stale'), true);

  await page.fill('#input-machine', '1');
  await waitFor(page, '#error-machine', (node) => node.hidden, 'hidden');
  assert.equal(await page.getAttribute('#input-machine', 'aria-invalid'), null);
  assert.equal(await page.isVisible('#result-stale'), false);

  await page.fill('#input-timestamp', 'soon');
  await waitFor(page, '#error-timestamp', (node) => !node.hidden && node.textContent.trim() !== '', 'an error');
  assert.equal(await page.getAttribute('#input-timestamp', 'aria-invalid'), 'true');
  assert.equal(await page.isVisible('#error-machine'), false);
  assertNoErrors();
});

test('decodes an ID, decimal or hex, and shows when it was made', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t, { badRequests: true });

  await page.fill('#decode-input', '1541815603606036480');
  await page.press('#decode-input', 'Enter');
  await waitText(page, '#result-time', '2022-06-28T16:07:40.105Z');
  assert.equal(await text(page, '#result-id'), '1541815603606036480');
  assert.equal(await text(page, '#result-hex'), '0x1565a11f6217a000');
  assert.match(await text(page, '#result-source'), /decoded/);
  // The compose inputs now hold the decoded parts, so the two views agree.
  assert.equal(await page.inputValue('#input-timestamp'), String(Date.parse('2022-06-28T16:07:40.105Z')));
  assert.equal(new URL(await page.inputValue('#share-link')).searchParams.get('decode'), '1541815603606036480');

  const hex = '0x1565a11f6217a001';
  await page.fill('#decode-input', hex);
  await waitText(page, '#result-id', BigInt(hex).toString());

  await page.fill('#decode-input', 'not-an-id');
  await waitFor(page, '#error-decode', (node) => !node.hidden && node.textContent.trim() !== '', 'an error');
  assert.equal(await page.getAttribute('#decode-input', 'aria-invalid'), 'true');
  assertNoErrors();
});

test('follows the chosen layout: discord has worker, process and increment', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);

  await page.selectOption('#layout', 'discord');
  await page.waitForSelector('#input-worker', { state: 'visible' });
  assert.equal(await labelOf(page, 'input-worker'), 'Worker ID');
  assert.equal(await labelOf(page, 'input-process'), 'Process ID');
  assert.equal(await labelOf(page, 'input-increment'), 'Increment');
  assert.equal(await page.locator('#input-datacenter').count(), 0);
  assert.equal(await page.locator('#input-machine').count(), 0);

  await page.fill('#input-timestamp', '1462015105796');
  await page.fill('#input-worker', '1');
  await page.fill('#input-increment', '7');
  await waitFor(page, '#result', (node) => node.querySelector('.segment[data-name="increment"] .segment-value')?.textContent === '7', 'increment 7');
  assert.equal(await text(page, '#result-time'), '2016-04-30T11:18:25.796Z');
  assert.deepEqual(
    (await segments(page)).map(({ name, bits }) => [name, bits]),
    [['timestamp', 42], ['worker', 5], ['process', 5], ['increment', 12]],
  );
  assert.match(await text(page, '#result-source'), /discord/);

  // The same ID read with another layout.
  await page.fill('#decode-input', '175928847299117063');
  await page.press('#decode-input', 'Enter');
  await waitText(page, '#result-time', '2016-04-30T11:18:25.796Z');
  assertNoErrors();
});

test('every preset gets its own inputs and a full 64-bit breakdown', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  const layouts = await page.evaluate(async () => (await fetch('/api/v1/layouts')).json());
  for (const layout of layouts) {
    await page.selectOption('#layout', layout.name);
    await waitText(page, '#result-source', `composed · ${layout.name}`);
    const inputs = await page.$$eval('#compose-fields input', (nodes) => nodes.map((n) => n.id));
    assert.deepEqual(inputs, ['input-timestamp', ...layout.fields.map(([name]) => `input-${name}`)]);
    const parts = await segments(page);
    const expected = [
      ...(layout.sign_bit ? [['sign', 1]] : []),
      ['timestamp', layout.time_bits],
      ...layout.fields,
    ];
    assert.deepEqual(parts.map(({ name, bits }) => [name, bits]), expected, layout.name);
    assert.equal(parts.map((p) => p.binary).join('').length, 64, layout.name);
  }
  assertNoErrors();
});

test('generates fresh IDs as long decimal strings, each decodable in one click', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);

  await page.selectOption('#generate-count', '5');
  await page.click('#generate-submit');
  await until(page, async () => (await page.locator('#generated .generated-id').count()) === 5, 'five IDs');
  const ids = await page.$$eval('#generated .generated-id', (nodes) => nodes.map((n) => n.textContent.trim()));
  for (const id of ids) assert.match(id, /^\d{15,}$/);
  for (let i = 1; i < ids.length; i += 1) assert.ok(BigInt(ids[i]) > BigInt(ids[i - 1]), `${ids[i]} > ${ids[i - 1]}`);

  await page.locator('#generated button.decode-generated').nth(2).click();
  await waitText(page, '#result-id', ids[2]);
  assert.match(await text(page, '#result-source'), /decoded/);
  assert.match(await text(page, '#result-time'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assertNoErrors();
});

test('switches to German and back, remembering the choice', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t, { badRequests: true });
  await composeExample(page);

  await page.click('#lang-de');
  await waitText(page, 'label[for="input-machine"]', 'Maschinen-ID');
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.equal(await page.getAttribute('#lang-de', 'aria-pressed'), 'true');
  assert.equal(await labelOf(page, 'input-timestamp'), 'Zeitstempel (ms)');
  assert.equal(await labelOf(page, 'input-datacenter'), 'Rechenzentrums-ID');
  assert.equal(await text(page, '#compose-heading'), 'ID zusammensetzen');
  assert.match(await text(page, '#hint-sequence'), /0 bis 4\.095/);
  assert.equal(await text(page, '.segment[data-name="machine"] .segment-name'), 'Maschine');
  assert.equal(new URL(await page.inputValue('#share-link')).searchParams.get('lang'), 'de');
  assert.equal(await page.evaluate(() => localStorage.getItem('snowflake.lang')), 'de');

  // API messages stay as the API words them.
  await page.fill('#input-machine', '32');
  await waitText(page, '#error-machine', /out of range: 0 to 31 \(5 bits\)/);

  await page.reload();
  await waitText(page, 'label[for="input-machine"]', 'Maschinen-ID');

  await page.click('#lang-en');
  await waitText(page, 'label[for="input-machine"]', 'Machine ID');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assertNoErrors();
});

test("starts in German when the browser's Accept-Language prefers it", TEST, async (t) => {
  const { page, assertNoErrors } = await open(t, { locale: 'de-DE' });
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.equal(await labelOf(page, 'input-machine'), 'Maschinen-ID');
  assertNoErrors();
});

test('a share link restores its inputs and result', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t, { query: `${EXAMPLE_QUERY}&lang=de` });
  await waitText(page, '#result-id', '4194439168');
  for (const [name, value] of Object.entries(EXAMPLE)) assert.equal(await page.inputValue(`#input-${name}`), value);
  assert.equal(await page.inputValue('#layout'), 'twitter');
  assert.equal(await labelOf(page, 'input-machine'), 'Maschinen-ID');

  await page.goto(`${BASE}/?layout=discord&decode=175928847299117063`);
  await waitText(page, '#result-time', '2016-04-30T11:18:25.796Z');
  assert.equal(await page.inputValue('#layout'), 'discord');
  assert.equal(await page.inputValue('#decode-input'), '175928847299117063');

  // The link the page offers reproduces what it shows.
  await page.goto(`${BASE}/`);
  await waitFor(page, '#result', (node) => node.dataset.state === 'ok', 'a result');
  await page.selectOption('#layout', 'instagram');
  await page.fill('#input-timestamp', '1700000000000');
  await page.fill('#input-shard', '42');
  await page.fill('#input-sequence', '3');
  await waitFor(page, '#bits', (node) => node.querySelector('.segment[data-name="shard"] .segment-value')?.textContent === '42', 'shard 42');
  await waitFor(page, '#bits', (node) => node.querySelector('.segment[data-name="sequence"] .segment-value')?.textContent === '3', 'sequence 3');
  const id = await text(page, '#result-id');
  const link = await page.inputValue('#share-link');
  const other = await context.newPage();
  await other.goto(link);
  await waitText(other, '#result-id', id);
  assert.equal(await other.inputValue('#input-shard'), '42');
  await other.close();
  assertNoErrors();
});

test('is usable with the keyboard alone', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);

  // Every control has a label.
  const unlabelled = await page.$$eval('input, select, textarea', (nodes) =>
    nodes.filter((n) => n.labels === null || n.labels.length === 0).map((n) => n.id || n.outerHTML),
  );
  assert.deepEqual(unlabelled, []);

  // Tab order: skip link, language, then the compose form top to bottom.
  const order = [];
  for (let i = 0; i < 10; i += 1) {
    await page.keyboard.press('Tab');
    order.push(await page.evaluate(() => document.activeElement.id || document.activeElement.className));
  }
  assert.deepEqual(order.slice(0, 10), [
    'skip-link',
    'lang-en',
    'lang-de',
    'layout',
    'input-timestamp',
    'input-datacenter',
    'input-machine',
    'input-sequence',
    'compose-submit',
    'copy-id',
  ]);

  // Focus is visible.
  await page.focus('#compose-submit');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const outline = await page.$eval('#compose-submit', (n) => getComputedStyle(n).outlineStyle);
  assert.notEqual(outline, 'none');

  // Compose from the keyboard.
  await page.focus('#input-timestamp');
  await page.keyboard.type(EXAMPLE.timestamp);
  await page.keyboard.press('Tab');
  await page.keyboard.type('1');
  await page.keyboard.press('Tab');
  await page.keyboard.type('1');
  await page.keyboard.press('Enter');
  await waitText(page, '#result-id', '4194439168');

  // Language by keyboard: the switch is made of real buttons.
  await page.focus('#lang-de');
  await page.keyboard.press('Enter');
  await waitText(page, 'label[for="input-machine"]', 'Maschinen-ID');
  assert.equal(await page.locator('[role="button"], a[href="#"], [onclick]').count(), 0);
  assertNoErrors();
});

test('fits a phone screen and a desktop; screenshots', TEST, async (t) => {
  const desktop = await open(t, { query: EXAMPLE_QUERY });
  await waitText(desktop.page, '#result-id', '4194439168');
  await desktop.page.click('#generate-submit');
  await desktop.page.waitForSelector('#generated .generated-id');
  await desktop.page.screenshot({ path: path.join(ARTIFACTS, 'page.png'), fullPage: true });
  desktop.assertNoErrors();

  for (const lang of ['en', 'de']) {
    const phone = await open(t, {
      query: `${EXAMPLE_QUERY}&lang=${lang}`,
      viewport: { width: 375, height: 740 },
      isMobile: true,
      hasTouch: true,
    });
    await waitText(phone.page, '#result-id', '4194439168');
    await phone.page.click('#generate-submit');
    await phone.page.waitForSelector('#generated .generated-id');
    const widths = await phone.page.evaluate(() => ({
      html: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
    }));
    assert.ok(widths.html <= 375, `page is ${widths.html}px wide in ${lang}`);
    assert.ok(widths.body <= 375, `body is ${widths.body}px wide in ${lang}`);
    if (lang === 'en') {
      await phone.page.screenshot({ path: path.join(ARTIFACTS, 'page-mobile.png'), fullPage: true });
    }
    phone.assertNoErrors();
  }

  const dark = await open(t, { query: EXAMPLE_QUERY, colorScheme: 'dark' });
  await waitText(dark.page, '#result-id', '4194439168');
  await dark.page.screenshot({ path: path.join(ARTIFACTS, 'page-dark.png'), fullPage: false });
  dark.assertNoErrors();
});

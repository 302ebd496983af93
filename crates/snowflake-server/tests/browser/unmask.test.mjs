// The Unmask panel in Chromium: the shared vectors (testdata/mask-vectors.json)
// both ways through the page, as a person pastes them; the key going nowhere
// (no request, storage, link or text of the page holds it); its errors in
// both languages; the saved page from file:// with the network off; a page
// outside a secure context, where it works as well; axe; screenshots.
// bindings/npm/test runs the same vectors through the module in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PRESET_TABLE, ROOT, errorOf, snowflake } from './support/data.mjs';
import { ARTIFACTS, BASE, TEST, axe, open, openSaved, text, until, useBrowser, waitFor, waitText } from './support/browser.mjs';

const PRESETS = PRESET_TABLE.presets.map((p) => p.name);
const CASES = JSON.parse(await readFile(path.join(ROOT, 'testdata/mask-vectors.json'), 'utf8')).cases;
const KEY = CASES[0].key;
// A masked tweet: the twitter cases of the first key, at a real ID.
const TWEET = CASES.find((c) => c.key === KEY && c.layout === 'twitter' && c.id === '1541815603606036480');
const UNMASK_LABEL = 'Masked IDs to unmask (one a line, up to 10,000)';
const MASK_LABEL = 'IDs to mask (one a line, up to 10,000)';

useBrowser();

async function chooseLayout(page, layout) {
  const select = page.getByLabel('Layout', { exact: true });
  if (PRESETS.includes(layout)) {
    await select.selectOption(layout);
  } else {
    await select.selectOption('custom');
    await page.getByLabel('Fields, most significant first').fill(layout);
  }
}

// Fills the panel and runs it one way; resolves when its summary says so.
async function run(page, { way = 'unmask', key = KEY, ids, format = 'auto', expect = /\.$/ }) {
  await page.getByRole('radio', { name: way === 'mask' ? 'Mask' : 'Unmask', exact: true }).check();
  await page.getByLabel('Key', { exact: true }).fill(key);
  await page.getByLabel('Text form').selectOption(format);
  await page.getByLabel(way === 'mask' ? MASK_LABEL : UNMASK_LABEL).fill(ids.join('\n'));
  await page.locator('#unmask-submit').click();
  await waitText(page, '#unmask-summary', expect);
}

// The table's rows: line, input, output, time, then the rest.
async function rows(page) {
  return page.$$eval('#unmask-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
}

test('every shared vector unmasks and masks through the panel as the CLI does', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  const groups = new Map();
  for (const c of CASES) groups.set(`${c.key} ${c.layout}`, [...(groups.get(`${c.key} ${c.layout}`) || []), c]);
  let checked = 0;
  for (const cases of groups.values()) {
    const { key, layout } = cases[0];
    await chooseLayout(page, layout);
    await run(page, { key, ids: cases.map((c) => c.masked), expect: `All ${cases.length} unmasked.` });
    assert.deepEqual((await rows(page)).map((r) => r[2]), cases.map((c) => c.id), `unmask under ${layout}`);
    await run(page, { way: 'mask', key, ids: cases.map((c) => c.id), expect: `All ${cases.length} masked.` });
    assert.deepEqual((await rows(page)).map((r) => r[2]), cases.map((c) => c.masked), `mask under ${layout}`);
    checked += cases.length;
  }
  assert.equal(checked, CASES.length);
  assertNoErrors();
});

test('an unmasked ID shows its breakdown, and its text forms go both ways', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await run(page, { ids: [TWEET.masked, 'nope'], expect: '1 of 2 unmasked; 1 could not be read.' });
  const [good, bad] = await rows(page);
  assert.deepEqual(good.slice(0, 8), ['1', TWEET.masked, TWEET.id, 'Decode', '2022-06-28T16:07:40.105Z', '11', '26', '0']);
  assert.equal(bad.at(-1), errorOf(() => snowflake.fromText('nope')).message);
  await page.getByRole('button', { name: `Decode ${TWEET.id}` }).click();
  await waitText(page, '#result-id', TWEET.id);
  assert.match(await text(page, '#result-source'), /^decoded · twitter/);

  // Written in base62, answered in base62, as `snowflake unmask --format base62`.
  await run(page, { ids: [snowflake.toText(TWEET.masked, 'base62')], format: 'base62', expect: 'All 1 unmasked.' });
  assert.equal((await rows(page))[0][2], snowflake.toText(TWEET.id, 'base62'));
  await run(page, { way: 'mask', ids: [snowflake.toText(TWEET.id, 'base58')], format: 'base58', expect: 'All 1 masked.' });
  assert.equal((await rows(page))[0][2], snowflake.toText(TWEET.masked, 'base58'));
  assertNoErrors();
});

test('the key goes nowhere: no request, storage, link or text of the page holds it', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t);
  const key = KEY.toUpperCase();
  const seen = [];
  // Every request from here on, with its headers and body, held up to the key.
  await context.route('**/*', async (route, request) => {
    seen.push(`${request.url()}\n${JSON.stringify(await request.allHeaders())}\n${request.postData() ?? ''}`);
    await route.continue();
  });
  context.on('request', (request) => seen.push(request.url()));

  const field = page.getByLabel('Key', { exact: true });
  assert.deepEqual(await field.evaluate((n) => [n.type, n.getAttribute('autocomplete'), n.hasAttribute('name'), n.form.getAttribute('autocomplete')]), ['password', 'off', false, 'off']);
  await run(page, { key: `  ${key}\t`, ids: [TWEET.masked], expect: 'All 1 unmasked.' });
  assert.equal((await rows(page))[0][2], TWEET.id);
  await page.getByRole('button', { name: `Decode ${TWEET.id}` }).click();
  await waitText(page, '#result-id', TWEET.id);
  // A request while the key is in the page, so that the net above caught something.
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForSelector('#generate-list .generated-id');
  assert.ok(seen.some((r) => r.includes('/api/v1/ids')), 'the request from Generate was not seen');

  const held = await page.evaluate(async () => {
    const all = (storage) => Object.keys(storage).map((k) => `${k}=${storage.getItem(k)}`);
    const databases = indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : [];
    return [location.href, document.cookie, document.referrer, ...all(localStorage), ...all(sessionStorage), ...databases, document.getElementById('result-share').value, document.documentElement.outerHTML, document.body.innerText];
  });
  const places = [...seen, ...held];
  for (const hex of [KEY, key]) {
    for (const place of places) assert.ok(!place.includes(hex), `the key in: ${place.slice(0, 200)}`);
  }
  assert.equal(await field.inputValue(), `  ${key}\t`);

  // A reload does not bring it back; Forget empties the field and the rows.
  await page.reload();
  await waitFor(page, '#result', (n) => n.dataset.state === 'ok', 'a result');
  assert.equal(await field.inputValue(), '');
  await run(page, { ids: [TWEET.masked], expect: 'All 1 unmasked.' });
  await page.getByRole('button', { name: 'Forget the key' }).click();
  await waitText(page, '#unmask-summary', 'The key and its results are cleared from the page.');
  assert.equal(await field.inputValue(), '');
  assert.equal(await page.isVisible('#unmask-box'), false);
  assert.equal(await page.locator('#unmask-table tr').count(), 0);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'unmask-key');
  assertNoErrors();
});

test("a bad key, a narrow layout and IDs outside the layout are marked in the core's words, in either language", TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  // In German, the core's words come after German ones that name the field.
  const shows = async (box, message) => {
    await waitText(page, box, message);
    await page.click('#lang-de');
    const escaped = message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await waitText(page, box, new RegExp(`^Ungültige Eingabe bei »[^«]+« \\(Meldung auf Englisch\\): ${escaped}$`));
    await page.click('#lang-en');
    await waitText(page, box, message);
  };
  await run(page, { key: KEY.slice(0, 63), ids: [TWEET.masked], expect: '' });
  await shows('#unmask-key-error', 'the key holds 63 characters; a key is 64 hexadecimal characters (256 bits)');
  assert.equal(errorOf(() => new snowflake.Masker(KEY.slice(0, 63))).message, 'the key holds 63 characters; a key is 64 hexadecimal characters (256 bits)');
  assert.equal(await page.getByLabel('Key', { exact: true }).getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#unmask-table tr').count(), 0);
  await run(page, { key: `${KEY.slice(0, 9)}g${KEY.slice(10)}`, ids: [TWEET.masked], expect: '' });
  await waitText(page, '#unmask-key-error', 'the key holds a character that is not hexadecimal (0-9, a-f) at position 10; a key is 64 hexadecimal characters (256 bits)');
  // Typing again takes the mark away.
  await page.getByLabel('Key', { exact: true }).fill(KEY);
  await waitFor(page, '#unmask-key-error', (n) => n.hidden, 'hidden');
  assert.equal(await page.getByLabel('Key', { exact: true }).getAttribute('aria-invalid'), null);

  await chooseLayout(page, 'time:15,sequence:4');
  await run(page, { ids: ['5'], expect: '' });
  await shows('#unmask-layout-error', errorOf(() => snowflake.checkMaskable('time:15,sequence:4')).message);
  assert.match(await text(page, '#unmask-layout-error'), /^layout time:15,sequence:4 is 19 bits wide; masking needs at least 20 bits/);
  // Both at once: each beside its own input.
  await run(page, { key: 'c0ffee', ids: ['5'], expect: '' });
  assert.equal(await page.isVisible('#unmask-key-error'), true);
  assert.equal(await page.isVisible('#unmask-layout-error'), true);

  await chooseLayout(page, 'js53');
  await waitText(page, '#unmask-input-hint', /^Read with the layout chosen above, js53 \(53 bits\)/);
  await run(page, { ids: ['5', String(1n << 53n)], expect: '1 of 2 unmasked; 1 could not be read.' });
  assert.equal(await page.isVisible('#unmask-layout-error'), false);
  await shows('#unmask-table tr[data-line="2"] .row-error', errorOf(() => snowflake.decode(1n << 53n, 'js53')).message);
  await run(page, { ids: [], expect: '' });
  await waitText(page, '#unmask-input-error', 'Paste at least one ID.');
  assertNoErrors();
});

test('the saved page unmasks from file:// with the network off', TEST, async (t) => {
  const { page, assertNoErrors, assertOffline } = await openSaved(t);
  await waitFor(page, '#result', (n) => n.dataset.state === 'ok', 'a result');
  await run(page, { ids: [TWEET.masked], expect: 'All 1 unmasked.' });
  assert.equal((await rows(page))[0][2], TWEET.id);
  await run(page, { way: 'mask', ids: [TWEET.id], expect: 'All 1 masked.' });
  assert.equal((await rows(page))[0][2], TWEET.masked);
  assertOffline();
  assertNoErrors();
});

test('outside a secure context the panel works as well: the module needs no WebCrypto', TEST, async (t) => {
  // The served page under a name that is neither https nor localhost.
  const html = await (await fetch(`${BASE}/`)).text();
  const { page, context, assertNoErrors } = await open(t, { url: 'about:blank', ready: false });
  await context.route('http://snowflake.test/**', (route) => route.fulfill({ body: html, contentType: 'text/html; charset=utf-8' }));
  await page.goto('http://snowflake.test/');
  await waitFor(page, '#result', (n) => n.dataset.state === 'ok', 'a result');
  assert.equal(await page.evaluate(() => window.isSecureContext), false);
  await run(page, { ids: [TWEET.masked], expect: 'All 1 unmasked.' });
  assert.equal((await rows(page))[0][2], TWEET.id);
  assertNoErrors();
});

test('accessibility and fit: axe finds nothing in the panel, light and dark, English and German; screenshots', TEST, async (t) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const lang of ['en', 'de']) {
      for (const [name, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 375, height: 740 }]]) {
        // bypassCSP only so that axe's script can be injected; the page is the same.
        const { page, assertNoErrors } = await open(t, { query: `?lang=${lang}`, colorScheme, viewport, bypassCSP: true });
        await page.fill('#unmask-key', KEY);
        await page.fill('#unmask-input', [TWEET.masked, 'nope', CASES.find((c) => c.key === KEY && c.layout === 'twitter' && c.id === '4194439168').masked].join('\n'));
        await page.click('#unmask-submit');
        await until(page, async () => (await page.locator('#unmask-table tbody tr').count()) === 3, 'three rows');
        await axe(page, `the panel with its rows (${colorScheme}, ${lang}, ${name})`);
        const widths = await page.evaluate(() => ({ html: document.documentElement.scrollWidth, section: document.getElementById('unmask').scrollWidth }));
        assert.ok(widths.html <= viewport.width, `${lang} ${name}: the page is ${widths.html}px wide`);
        if (colorScheme === 'light') await page.locator('#unmask').screenshot({ path: path.join(ARTIFACTS, `unmask-${name}-${lang}.png`) });
        await page.fill('#unmask-key', 'c0ffee');
        await page.click('#unmask-submit');
        await waitFor(page, '#unmask-key-error', (n) => !n.hidden, 'an error');
        await axe(page, `the panel with an error (${colorScheme}, ${lang}, ${name})`);
        assertNoErrors();
      }
    }
  }
});

// The web page in a real browser (Debian's Chromium, driven by playwright-core):
// served by a running `snowflake serve` (SNOWFLAKE_URL) and saved to a file
// (SNOWFLAKE_PAGE, opened from file:// with the network off). Features are
// found by their labels and checked by what they show, as a person would;
// every test fails on any console error or uncaught exception. The browser
// and the helpers are in support/browser.mjs; verdicts.test.mjs holds the
// every-layout table against the API.
//
// Run by scripts/browser-test, which starts the server, writes the saved page
// and sets both variables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PRESET_TABLE, VECTORS, attemptVector, errorOf, snowflake } from './support/data.mjs';
import { ARTIFACTS, BASE, TEST, axe, fact, open, openSaved, text, until, useBrowser, waitFor, waitText } from './support/browser.mjs';

// Everything the first view loads, compressed: the page is one document.
// Its own code, words and styles stay within what they had before the
// model became the core compiled to WebAssembly; the module (the core, its
// masking's FF1 and AES, JSON, the generator), which the page carries
// gzipped, has a budget of its own.
const BUDGET_GZIP_BYTES = 60 * 1024;
const MODULE_BUDGET_BYTES = 64 * 1024;
// The presets as the core's table lists them, in its order.
const PRESETS = PRESET_TABLE.presets.map((p) => p.name);

const EXAMPLE = { 'Timestamp (ms)': '1288834975657', 'Datacenter ID': '1', 'Machine ID': '1', Sequence: '0' };
const EXAMPLE_QUERY = '?layout=twitter&timestamp=1288834975657&datacenter=1&machine=1&sequence=0';

useBrowser();

async function composeExample(page) {
  for (const [label, value] of Object.entries(EXAMPLE)) await page.getByLabel(label, { exact: true }).fill(value);
  await waitText(page, '#result-id', '4194439168');
}

async function segments(page) {
  return page.$$eval('#result-bits .segment', (nodes) =>
    nodes.map((node) => ({
      name: node.dataset.name,
      bits: Number(node.dataset.bits),
      value: node.querySelector('.segment-value').textContent.trim(),
      binary: node.querySelector('.segment-binary').textContent.trim(),
      top: Math.round(node.getBoundingClientRect().top),
    })),
  );
}

// Chooses a layout as a case names it: a preset from the list, or the custom
// layout with its spec, epoch and tick typed in.
// An empty epoch or tick keeps the spec's own: a preset's, or 0 and 1 ms.
async function chooseLayout(page, c) {
  const select = page.getByLabel('Layout', { exact: true });
  if (PRESETS.includes(c.layout) && c.epoch_ms === undefined && c.tick_ms === undefined) {
    await select.selectOption(c.layout);
    return;
  }
  await select.selectOption('custom');
  await page.getByLabel('Fields, most significant first').fill(c.layout);
  await page.getByLabel('Epoch', { exact: true }).fill(big(c.epoch_ms));
  await page.getByLabel('Tick (ms)').fill(big(c.tick_ms));
}

// A number from the vector file as its digits. JSON gives a double, exact for
// these values but printed by String() in its shortest form, not digit for digit.
function big(n) {
  return n === undefined ? '' : BigInt(n).toString();
}

// The values of one CSV line, quotes undone (RFC 4180).
function csvCells(line) {
  const cells = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      let j = i + 1;
      while (j < line.length && !(line[j] === '"' && line[j + 1] !== '"')) {
        value += line[j];
        j += line[j] === '"' ? 2 : 1;
      }
      cells.push(value);
      i = j + 2;
    } else {
      const comma = line.indexOf(',', i);
      const end = comma < 0 ? line.length : comma;
      cells.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return cells;
}

// ---------------------------------------------------------------------------

test('composes the worked example: its ID, text forms, time, segments and share link', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t);
  assert.match(await text(page, '#compose-field-machine-hint'), /^0 to 31 \(5 bits\)$/);
  assert.match(await text(page, '#compose-field-sequence-hint'), /0 to 4,095/);
  assert.deepEqual(await page.$$eval('#layout-select option', (o) => o.map((x) => x.value)), [...PRESETS, 'custom']);

  await composeExample(page);
  const forms = VECTORS.compose.find((c) => c.id === '4194439168').text;
  assert.equal(await fact(page, 'Hexadecimal'), forms.hex);
  assert.equal(await fact(page, 'Crockford base32'), forms.base32);
  assert.equal(await fact(page, 'Base62'), forms.base62);
  assert.equal(await fact(page, 'Base58'), forms.base58);
  assert.equal(await fact(page, 'Time (UTC)'), '2010-11-04T01:42:55.657Z');
  assert.equal(await fact(page, 'Unix time'), '1288834975657 ms');
  assert.match(await fact(page, 'Relative'), /years ago$/);

  const parts = await segments(page);
  assert.deepEqual(parts.map(({ name, bits }) => [name, bits]), [['sign', 1], ['timestamp', 41], ['datacenter', 5], ['machine', 5], ['sequence', 12]]);
  const byName = Object.fromEntries(parts.map((p) => [p.name, p]));
  assert.equal(byName.machine.binary, '00001');
  assert.equal(byName.timestamp.value, '1000');
  assert.equal(BigInt(`0b${parts.map((p) => p.binary).join('')}`), 4194439168n);

  await page.getByLabel('Sequence').fill('5');
  await page.getByLabel('Sequence').press('Enter');
  await waitText(page, '#result-id', '4194439173');
  const params = new URL(await page.getByLabel('Share link').inputValue()).searchParams;
  assert.deepEqual(Object.fromEntries(params), { layout: 'twitter', timestamp: '1288834975657', datacenter: '1', machine: '1', sequence: '5', lang: 'en' });

  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  await page.getByRole('button', { name: 'Copy ID (decimal)' }).click();
  await waitText(page, '#copy-status', 'Copied ID (decimal).');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '4194439173');
  await page.getByRole('button', { name: 'Copy Crockford base32' }).click();
  // 4194439173 in Crockford base32, worked out with Python.
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '0000003X04405');
  assertNoErrors();
});

test('every compose vector composes to its ID and decodes back, through the page', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  for (const c of VECTORS.compose) {
    const what = `${c.layout} ${c.epoch_ms ?? ''} ${c.tick_ms ?? ''} ${c.timestamp_ms}`;
    await chooseLayout(page, c);
    await page.fill('#compose-timestamp', String(c.timestamp_ms));
    for (const [name, value] of Object.entries(c.fields)) await page.fill(`#compose-field-${name}`, String(value));
    await waitText(page, '#result-id', c.id);
    for (const [form, value] of Object.entries(c.text)) assert.equal(await text(page, `#result-${form}`), value, `${what} ${form}`);
    const parts = await segments(page);
    assert.equal(parts.reduce((n, p) => n + p.bits, 0), 64, what);
    for (const [name, value] of Object.entries(c.fields)) assert.equal(parts.find((p) => p.name === name).value, String(value), `${what} ${name}`);
    // And back: the base58 form read under the same layout.
    await page.getByLabel('Written as').selectOption('base58');
    await page.getByLabel('ID', { exact: true }).fill(c.text.base58);
    await waitText(page, '#result-source', /^decoded/);
    assert.equal(await text(page, '#result-id'), c.id, what);
    assert.equal(await text(page, '#result-time'), new Date(c.timestamp_ms).toISOString(), what);
    await page.getByLabel('Written as').selectOption('auto');
    await page.getByLabel('ID', { exact: true }).fill('');
  }
  assertNoErrors();
});

// The error the package, the page's own module, raises for a vector's
// mistake: the words the page must show, which are the command's and the API's.
function vectorError(e) {
  return errorOf(() => attemptVector(e));
}

test("every error vector shows the core's message beside its field, in German after words that name the field", TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  const boxFor = (e) => {
    if (e.op === 'decode') return '#decode-input-error';
    if (e.op === 'layout') return e.field === 'epoch' ? '#layout-epoch-error' : e.field === 'tick_ms' ? '#layout-tick-error' : '#layout-spec-error';
    return e.field === 'timestamp' ? '#compose-timestamp-error' : `#compose-field-${e.field}-error`;
  };
  for (const e of VECTORS.errors) {
    const expected = vectorError(e);
    assert.equal(expected.field, e.field, `${JSON.stringify(e)}: the field the core blames`);
    assert.ok(expected.message.includes(e.value), `${expected.message} names ${e.value}`);
    await page.click('#lang-en');
    if (e.op === 'layout') {
      await chooseLayout(page, { layout: 'custom' });
      await page.getByLabel('Fields, most significant first').fill(e.spec);
      await page.getByLabel('Epoch', { exact: true }).fill(big(e.epoch_ms));
      await page.getByLabel('Tick (ms)').fill(big(e.tick_ms));
    } else {
      await page.getByLabel('Layout', { exact: true }).selectOption(e.layout);
      if (e.op === 'decode') {
        await page.getByLabel('ID', { exact: true }).fill(e.id);
      } else {
        await page.getByLabel('ID', { exact: true }).fill('');
        for (const input of await page.$$('#compose-grid input')) await input.fill('');
        await page.fill('#compose-timestamp', String(e.timestamp_ms));
        for (const [name, value] of Object.entries(e.fields)) await page.fill(`#compose-field-${name}`, String(value));
      }
    }
    const box = boxFor(e);
    await waitText(page, box, expected.message);
    assert.equal(await page.isVisible(box), true, box);
    await page.click('#lang-de');
    const escaped = expected.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await waitText(page, box, new RegExp(`^Ungültige Eingabe bei »[^«]+« \\(Meldung auf Englisch\\): ${escaped}$`));
    // The field the message blames is marked for assistive technology too.
    const control = await page.$eval(box, (node) => document.querySelector(`[aria-describedby~="${node.id}"]`)?.getAttribute('aria-invalid'));
    assert.equal(control, 'true', `${box} marks its input`);
  }
  assertNoErrors();
});

test('an invalid input marks only its own field and keeps the last ID with a note', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await composeExample(page);
  await page.getByLabel('Machine ID').fill('32');
  await waitText(page, '#compose-field-machine-error', 'machine 32 is out of range: 0 to 31 (5 bits)');
  assert.equal(await page.isVisible('#compose-field-datacenter-error'), false);
  assert.equal(await text(page, '#result-id'), '4194439168');
  assert.equal(await page.isVisible('#result-stale'), true);
  await page.getByLabel('Machine ID').fill('1');
  await waitFor(page, '#compose-field-machine-error', (n) => n.hidden, 'hidden');
  assert.equal(await page.isVisible('#result-stale'), false);
  await page.getByLabel('Timestamp (ms)').fill('soon');
  await waitText(page, '#compose-timestamp-error', /^Timestamp "soon" is not a time/);
  assertNoErrors();
});

test('decoding keeps what was typed in Compose, and loading it there can be undone', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await composeExample(page);
  await page.getByLabel('ID', { exact: true }).fill('1541815603606036480');
  await page.getByRole('button', { name: 'Decode', exact: true }).click();
  await waitText(page, '#result-time', '2022-06-28T16:07:40.105Z');
  assert.match(await text(page, '#result-source'), /^decoded · twitter/);
  assert.equal(await page.getByLabel('Machine ID').inputValue(), '1');
  assert.equal(await page.getByLabel('Timestamp (ms)').inputValue(), '1288834975657');

  await page.getByRole('button', { name: 'Edit these parts in Compose' }).click();
  assert.equal(await page.getByLabel('Timestamp (ms)').inputValue(), '1656432460105');
  assert.equal(await page.getByLabel('Datacenter ID').inputValue(), '11');
  assert.equal(await page.getByLabel('Machine ID').inputValue(), '26');
  await waitText(page, '#result-id', '1541815603606036480');
  await page.getByRole('button', { name: 'Undo: restore my Compose input' }).click();
  assert.equal(await page.getByLabel('Timestamp (ms)').inputValue(), '1288834975657');
  assert.equal(await page.getByLabel('Machine ID').inputValue(), '1');
  await waitText(page, '#result-id', '4194439168');
  assertNoErrors();
});

test('a pasted ID under every preset, each marked possible, implausible or impossible', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await page.getByLabel('Layout', { exact: true }).selectOption('discord');
  await page.getByLabel('ID', { exact: true }).fill('175928847299117063');
  await waitText(page, '#result-time', '2016-04-30T11:18:25.796Z');
  const table = page.getByRole('region', { name: 'This ID under every layout' });
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
  const byLayout = Object.fromEntries(rows.map((r) => [r[0], r]));
  assert.deepEqual(Object.keys(byLayout), PRESETS);
  assert.deepEqual(byLayout.discord.slice(1), ['Discord', '2016-04-30T11:18:25.796Z', 'possible']);
  assert.equal(byLayout.twitter[2], '2012-03-03T13:01:20.453Z');
  // The reasons are the core's, as the API and the command give them.
  const reasons = Object.fromEntries(snowflake.readings('175928847299117063').readings.map((r) => [r.layout, r.reason]));
  assert.match(reasons.mastodon, /is in the future/);
  // The reason names the time of the reading, a few milliseconds apart.
  assert.equal(byLayout.mastodon[3].replace(/now is [^)]*/, 'now'), `implausible · ${reasons.mastodon}`.replace(/now is [^)]*/, 'now'));
  assert.match(reasons.js53, /^id 175928847299117063 has bits set above its lowest 53/);
  assert.equal(byLayout.js53[3], `impossible · ${reasons.js53}`);
  assert.equal(await fact(page, 'Discord timestamp'), '<t:1462015105:R>');
  await page.click('#lang-de');
  await waitText(page, '#everywhere-rows tr[data-layout="mastodon"] td:last-child', /^unplausibel · its time, .* is in the future/);
  assertNoErrors();
});

test('time zone, Unix seconds and relative time, in both languages', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t, { query: EXAMPLE_QUERY, timezoneId: 'Asia/Tokyo' });
  await waitText(page, '#result-id', '4194439168');
  assert.equal(await page.isVisible('#result-zoned-row'), false);
  await page.getByLabel('Time zone', { exact: true }).selectOption('local');
  await waitText(page, '#result-zoned', '2010-11-04 10:42:55.657 GMT+9');
  await page.getByLabel('Time zone', { exact: true }).selectOption('other');
  await page.getByLabel('IANA time zone').fill('America/New_York');
  await waitText(page, '#result-zoned', '2010-11-03 21:42:55.657 GMT-4');
  assert.equal(await text(page, '#result-zoned-label'), 'Time (America/New_York)');
  await page.getByLabel('IANA time zone').fill('Mars/Olympus');
  await waitText(page, '#settings-zone-name-error', 'Time zone "Mars/Olympus" is unknown: use an IANA name such as Europe/Berlin');
  // Until the name is a zone, times are shown in UTC only.
  assert.equal(await page.isVisible('#result-zoned-row'), false);

  await page.getByLabel('Unix time in').selectOption('s');
  await waitText(page, '#result-unix', '1288834975.657 s');
  assert.equal(await text(page, 'label[for="compose-timestamp"]'), 'Timestamp (s)');
  await page.getByLabel('Timestamp (s)').fill('1700000000');
  await waitText(page, '#result-time', '2023-11-14T22:13:20.000Z');
  await page.getByLabel('Timestamp (s)').fill('2024-02-29T12:00:00Z');
  await waitText(page, '#result-time', '2024-02-29T12:00:00.000Z');

  const relative = await fact(page, 'Relative');
  assert.match(relative, /^\d+ (years|months) ago$|^last year$/);
  await page.click('#lang-de');
  await waitText(page, '#result-relative', /^vor \d+ (Jahren|Monaten)$|^letztes Jahr$/);
  assertNoErrors();
});

test('date → ID range: the first and last ID of a window, in the chosen zone', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await page.getByLabel('From', { exact: true }).fill('2010-11-04T01:42:55.657Z');
  await page.getByLabel('To', { exact: true }).fill('1288834975657');
  await page.getByRole('button', { name: 'Find the IDs' }).click();
  await waitText(page, '#range-first', String(1000n << 22n));
  assert.equal(await text(page, '#range-last'), String((1000n << 22n) | ((1n << 22n) - 1n)));
  assert.equal(await text(page, '#range-sql'), `WHERE id BETWEEN ${1000n << 22n} AND ${(1000n << 22n) | ((1n << 22n) - 1n)}`);

  // A date without an offset is read in the chosen zone: midnight in Berlin is 23:00 UTC the day before.
  await page.getByLabel('Time zone', { exact: true }).selectOption('other');
  await page.getByLabel('IANA time zone').fill('Europe/Berlin');
  await page.getByLabel('From', { exact: true }).fill('2024-01-01');
  await page.getByLabel('To', { exact: true }).fill('2024-07-01');
  await page.getByRole('button', { name: 'Find the IDs' }).click();
  const epoch = 1288834974657n;
  const from = BigInt(Date.parse('2023-12-31T23:00:00Z'));
  const to = BigInt(Date.parse('2024-06-30T22:00:00Z'));
  await waitText(page, '#range-first', String((from - epoch) << 22n));
  assert.equal(await text(page, '#range-last'), String(((to - epoch) << 22n) | ((1n << 22n) - 1n)));

  await page.getByLabel('From', { exact: true }).fill('2025-01-01');
  await page.getByRole('button', { name: 'Find the IDs' }).click();
  await waitText(page, '#range-from-error', 'from 1735686000000 (2024-12-31T23:00:00.000Z) is after to 1719784800000 (2024-06-30T22:00:00.000Z)');
  await page.getByLabel('From', { exact: true }).fill('1999-01-01');
  await page.getByRole('button', { name: 'Find the IDs' }).click();
  await waitText(page, '#range-from-error', errorOf(() => snowflake.timeUnits('twitter', 915145200000)).message);
  await page.getByLabel('From', { exact: true }).fill('2024-01-01');
  await page.getByLabel('To', { exact: true }).fill('2099-01-01');
  await page.getByRole('button', { name: 'Find the IDs' }).click();
  await waitText(page, '#range-to-error', /^timestamp 4070905200000 \(2098-12-31T23:00:00\.000Z\) is after the last time the layout can encode/);
  assert.equal(await page.isVisible('#range-from-error'), false);
  assertNoErrors();
});

test('times: RFC 3339 as the command reads it, and the shorter dates a person types', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  // RFC 3339 is the core's: a leap second is :59, a fraction is cut to ms, any offset.
  for (const [typed, shown] of [
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.000Z'],
    ['2024-02-29T12:00:00.123456789+01:00', '2024-02-29T11:00:00.123Z'],
    ['2024-02-29 12:00:00.5-00:30', '2024-02-29T12:30:00.500Z'],
    // Shorter, the page's own: no seconds, an offset without its colon.
    ['2024-02-29T12:00+0100', '2024-02-29T11:00:00.000Z'],
  ]) {
    await page.getByLabel('Timestamp (ms)').fill(typed);
    await waitText(page, '#result-time', shown);
  }
  // Years 0 to 99 are those years, in a date without an offset too.
  await page.getByLabel('Layout', { exact: true }).selectOption('custom');
  await page.getByLabel('Fields, most significant first').fill('time:44,sequence:19');
  for (const epoch of ['0050-01-01T00:00:00Z', '0050-01-01']) {
    await page.getByLabel('Epoch', { exact: true }).fill(epoch);
    await waitText(page, '#layout-info', /Epoch 0050-01-01T00:00:00.000Z/);
  }
  assertNoErrors();
});

test('a custom layout with epoch and tick composes, and its share link restores it', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t);
  await page.getByLabel('Layout', { exact: true }).selectOption('custom');
  await page.getByLabel('Fields, most significant first').fill('time:29,worker:21,sequence:13');
  // Baidu's uid-generator: seconds since midnight 2016-09-20 in Beijing.
  await page.getByLabel('Epoch', { exact: true }).fill('2016-09-20T00:00:00+08:00');
  await page.getByLabel('Tick (ms)').fill('1000');
  assert.match(await text(page, '#layout-info'), /Epoch 2016-09-19T16:00:00.000Z · ticks of 1,000 ms/);
  await page.getByLabel('Timestamp (ms)').fill('1700000000000');
  await page.getByLabel('Worker ID').fill('12345');
  await page.getByLabel('Sequence').fill('8000');
  const c = VECTORS.compose.find((v) => v.layout === 'time:29,worker:21,sequence:13' && v.fields.worker === 12345);
  await waitText(page, '#result-id', c.id);
  const link = await page.getByLabel('Share link').inputValue();
  const params = new URL(link).searchParams;
  assert.equal(params.get('spec'), 'time:29,worker:21,sequence:13');
  assert.equal(params.get('tick'), '1000');
  const other = await context.newPage();
  await other.goto(link);
  await waitText(other, '#result-id', c.id);
  assert.equal(await other.getByLabel('Layout', { exact: true }).inputValue(), 'custom');
  assert.equal(await other.getByLabel('Worker ID').inputValue(), '12345');

  // A spec being typed that does not parse leaves the inputs as they were.
  await page.getByLabel('Fields, most significant first').fill('time:29,worker:21,sequence:13,x');
  await waitText(page, '#layout-spec-error', errorOf(() => snowflake.parseLayout('time:29,worker:21,sequence:13,x')).message);
  assert.equal(await page.getByLabel('Worker ID').inputValue(), '12345');
  assertNoErrors();
});

test('bulk decode: a table with bad lines marked in place, CSV copied and downloaded, 10,000 at most', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  await page.getByLabel('IDs, one a line (up to 10,000)').fill('4194439168\n\nnot-an-id\n0x1565a11f6217a000\n9223372036854775808\n');
  await page.getByRole('button', { name: 'Decode all' }).click();
  await waitText(page, '#bulk-summary', '2 of 4 decoded; 2 could not be read.');
  const rows = await page.$$eval('#bulk-table tbody tr', (trs) => trs.map((tr) => ({ bad: tr.classList.contains('bad-row'), cells: [...tr.children].map((c) => c.textContent.trim()) })));
  assert.deepEqual(rows.map((r) => [r.cells[0], r.bad]), [['1', false], ['3', true], ['4', false], ['5', true]]);
  assert.deepEqual(rows[0].cells.slice(2, 7), ['4194439168', '2010-11-04T01:42:55.657Z', '1', '1', '0']);
  const notAnId = errorOf(() => snowflake.fromText('not-an-id')).message;
  assert.match(notAnId, /^id "not-an-id" is not decimal/);
  assert.equal(rows[1].cells.at(-1), notAnId);
  assert.equal(rows[2].cells[2], '1541815603606036480');

  await page.getByRole('button', { name: 'Copy as CSV' }).click();
  const csv = await page.evaluate(() => navigator.clipboard.readText());
  const lines = csv.trim().split(/\r\n/);
  assert.equal(lines[0], 'line,input,id,timestamp_ms,time,datacenter,machine,sequence,error');
  assert.equal(lines[1], '1,4194439168,4194439168,1288834975657,2010-11-04T01:42:55.657Z,1,1,0,');
  assert.equal(lines[2], `3,not-an-id,,,,,,,"${notAnId.replace(/"/g, '""')}"`);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  assert.equal(download.suggestedFilename(), 'snowflake-twitter.csv');
  assert.equal(await readFile(await download.path(), 'utf8'), csv);

  // 10,000 lines arrive as one paste: one input event with the whole text.
  // (Typing them through fill() outlasts the test's time limit in Chromium.)
  const paste = (text) =>
    page.getByLabel('IDs, one a line (up to 10,000)').evaluate((node, value) => {
      node.value = value;
      node.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
    }, text);
  const many = Array.from({ length: 10000 }, (_, i) => String(4194439168n + BigInt(i))).join('\n');
  await paste(`${many}\n`);
  const started = Date.now();
  await page.getByRole('button', { name: 'Decode all' }).click();
  await waitText(page, '#bulk-summary', /^All 10,000 decoded\. The table shows the first 2,000 rows; the CSV has all 10,000\.$/);
  assert.ok(Date.now() - started < 10000, `10,000 IDs took ${Date.now() - started} ms`);
  assert.equal(await page.locator('#bulk-table tbody tr').count(), 2000);
  await paste(`${many}\n1`);
  await page.getByRole('button', { name: 'Decode all' }).click();
  await waitText(page, '#bulk-input-error', 'Paste at most 10,000 IDs; this has 10,001');
  assertNoErrors();
});

test('the CSV defuses cells a spreadsheet would run as formulas', TEST, async (t) => {
  const { page, context, assertNoErrors } = await open(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  const hostile = ['=1+1', "+cmd|'/c calc'!A0", '@SUM(A1)', '-2+3', '=HYPERLINK("http://example.invalid","x")'];
  await page.getByLabel('IDs, one a line (up to 10,000)').fill(['4194439168', ...hostile].join('\n'));
  await page.getByRole('button', { name: 'Decode all' }).click();
  await waitText(page, '#bulk-summary', `1 of ${hostile.length + 1} decoded; ${hostile.length} could not be read.`);
  // The table shows what was typed, as text.
  const inputs = await page.$$eval('#bulk-table tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(inputs, ['4194439168', ...hostile]);
  await page.getByRole('button', { name: 'Copy as CSV' }).click();
  const csv = await page.evaluate(() => navigator.clipboard.readText());
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  assert.equal(await readFile(await download.path(), 'utf8'), csv);
  const lines = csv.split('\r\n');
  assert.equal(lines[1], '1,4194439168,4194439168,1288834975657,2010-11-04T01:42:55.657Z,1,1,0,');
  // Each hostile cell: a single quote in front, the whole cell quoted.
  const defused = hostile.map((cell) => `"'${cell.replace(/"/g, '""')}"`);
  hostile.forEach((cell, i) => assert.ok(lines[i + 2].startsWith(`${i + 2},${defused[i]},,`), `${cell}: ${lines[i + 2]}`));
  // What a spreadsheet reads from each cell begins with no formula character.
  for (const line of lines.filter(Boolean)) {
    for (const cell of csvCells(line)) assert.doesNotMatch(cell, /^[=+\-@\t\r]/, `a cell that a spreadsheet runs: ${cell} in ${line}`);
  }
  assertNoErrors();
});

test('narrow layouts: js53 IDs stay under 2^53 and the strip shows the unused top bits', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await page.getByLabel('Layout', { exact: true }).selectOption('js53');
  assert.match(await text(page, '#layout-info'), /fits a JavaScript number/);
  const c = VECTORS.compose.find((v) => v.layout === 'js53' && v.fields.worker === 63);
  await page.getByLabel('Timestamp (ms)').fill(String(c.timestamp_ms));
  await page.getByLabel('Worker ID').fill('63');
  await page.getByLabel('Sequence').fill('63');
  await waitText(page, '#result-id', '9007199254740991');
  assert.deepEqual((await segments(page)).map((s) => [s.name, s.bits]), [['unused', 11], ['timestamp', 41], ['worker', 6], ['sequence', 6]]);
  await page.getByLabel('ID', { exact: true }).fill('9007199254740992');
  await waitText(page, '#decode-input-error', 'id 9007199254740992 has bits set above its lowest 53, but layout js53 uses only 53 bits and keeps the rest 0; its IDs are 0 to 9007199254740991');
  assertNoErrors();
});

test('the 64-bit strip keeps one row at desktop width, for every layout and both languages', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  for (const lang of ['en', 'de']) {
    await page.click(`#lang-${lang}`);
    for (const layout of [...PRESETS, 'custom']) {
      await page.selectOption('#layout-select', layout);
      if (layout === 'custom') await page.fill('#layout-spec', 'time:40,region:3,zone:4,rack:5,host:5,sequence:7');
      await waitFor(page, '#result', (n) => n.dataset.state === 'ok', 'a result');
      const tops = new Set((await segments(page)).map((s) => s.top));
      assert.equal(tops.size, 1, `${layout} in ${lang}: the strip wraps onto ${tops.size} rows`);
      const overflow = await page.$eval('#result-bits', (n) => n.scrollWidth - n.clientWidth);
      assert.ok(overflow <= 0, `${layout} in ${lang}: the strip overflows by ${overflow}px`);
    }
  }
  assertNoErrors();
});

test('German: labels, hints, messages and the language buttons, remembered', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await composeExample(page);
  // The buttons show EN and DE, and their names begin with what they show.
  assert.equal(await page.getByRole('button', { name: 'EN English' }).textContent(), 'EN English');
  assert.equal(await page.$eval('#lang-en', (n) => n.firstChild.textContent), 'EN');
  await page.getByRole('button', { name: 'DE German' }).click();
  await waitText(page, 'label[for="compose-field-machine"]', 'Maschinen-ID');
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.equal(await page.getAttribute('#lang-de', 'aria-pressed'), 'true');
  assert.equal(await page.$eval('#lang-de', (n) => n.firstChild.textContent), 'DE');
  assert.match(await text(page, '#compose-field-sequence-hint'), /0 bis 4\.095/);
  await page.getByLabel('Maschinen-ID').fill('32');
  // The core's words, as the command and the API say them, after German
  // words that name the field.
  await waitText(page, '#compose-field-machine-error', 'Ungültige Eingabe bei »Maschinen-ID« (Meldung auf Englisch): machine 32 is out of range: 0 to 31 (5 bits)');
  assert.equal(await page.evaluate(() => localStorage.getItem('snowflake.lang')), 'de');
  await page.reload();
  await waitText(page, 'label[for="compose-field-machine"]', 'Maschinen-ID');
  await page.getByRole('button', { name: 'EN Englisch' }).click();
  await waitText(page, 'label[for="compose-field-machine"]', 'Machine ID');
  assertNoErrors();
});

test("starts in German when the browser's Accept-Language prefers it", TEST, async (t) => {
  const { page, assertNoErrors } = await open(t, { locale: 'de-DE' });
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.equal(await text(page, 'label[for="compose-field-machine"]'), 'Maschinen-ID');
  assertNoErrors();
});

test('dark mode follows the system until chosen, and the choice is remembered', TEST, async (t) => {
  const background = (page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const { page, assertNoErrors } = await open(t, { colorScheme: 'dark' });
  assert.equal(await page.getByLabel('Theme').inputValue(), 'system');
  assert.equal(await background(page), 'rgb(15, 18, 22)');
  await page.getByLabel('Theme').selectOption('light');
  assert.equal(await background(page), 'rgb(244, 245, 247)');
  await page.reload();
  await waitFor(page, '#result', (n) => n.dataset.state === 'ok', 'a result');
  assert.equal(await page.getByLabel('Theme').inputValue(), 'light');
  assert.equal(await background(page), 'rgb(244, 245, 247)');
  await page.getByLabel('Theme').selectOption('dark');
  assert.equal(await background(page), 'rgb(15, 18, 22)');
  assertNoErrors();
});

test('generates fresh IDs from the server, each decodable in one click', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  await page.getByLabel('How many').selectOption('5');
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await until(page, async () => (await page.locator('#generate-list .generated-id').count()) === 5, 'five IDs');
  const ids = await page.$$eval('#generate-list .generated-id', (nodes) => nodes.map((n) => n.textContent.trim()));
  for (let i = 1; i < ids.length; i += 1) assert.ok(BigInt(ids[i]) > BigInt(ids[i - 1]));
  await page.getByRole('button', { name: `Decode ${ids[2]}` }).click();
  await waitText(page, '#result-id', ids[2]);
  assert.match(await text(page, '#result-source'), /^decoded/);
  assertNoErrors();
});

test('compose, decode and bulk by keyboard alone', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  const unlabelled = await page.$$eval('input, select, textarea', (nodes) => nodes.filter((n) => !n.labels || n.labels.length === 0).map((n) => n.id));
  assert.deepEqual(unlabelled, []);
  const focused = () => page.evaluate(() => document.activeElement.id);
  const tabTo = async (id) => {
    for (let i = 0; i < 40 && (await focused()) !== id; i += 1) await page.keyboard.press('Tab');
    assert.equal(await focused(), id, `Tab reaches #${id}`);
  };
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip-link');
  await page.keyboard.press('Enter');
  await tabTo('layout-select');
  await tabTo('compose-timestamp');
  await page.keyboard.type('1288834975657');
  await page.keyboard.press('Tab');
  await page.keyboard.type('1');
  await page.keyboard.press('Tab');
  await page.keyboard.type('1');
  await page.keyboard.press('Enter');
  await waitText(page, '#result-id', '4194439168');
  const outline = await page.$eval('#compose-field-machine', (n) => getComputedStyle(n).outlineStyle);
  assert.notEqual(outline, 'none');

  await tabTo('decode-input');
  await page.keyboard.type('1541815603606036480');
  await page.keyboard.press('Enter');
  await waitText(page, '#result-time', '2022-06-28T16:07:40.105Z');

  await tabTo('bulk-input');
  await page.keyboard.type('4194439168');
  await page.keyboard.press('Enter');
  await page.keyboard.type('oops');
  await tabTo('bulk-submit');
  await page.keyboard.press('Enter');
  await waitText(page, '#bulk-summary', '1 of 2 decoded; 1 could not be read.');
  assertNoErrors();
});

test('no console errors while typing invalid input everywhere', TEST, async (t) => {
  const { page, assertNoErrors } = await open(t);
  for (const [label, value] of [['Machine ID', '32'], ['Sequence', 'x'], ['Timestamp (ms)', '-5'], ['ID', 'zz'], ['From', 'tomorrow']]) {
    await page.getByLabel(label, { exact: true }).fill(value);
  }
  await page.getByRole('button', { name: 'Find the IDs' }).click();
  await page.getByLabel('Layout', { exact: true }).selectOption('custom');
  await page.getByLabel('Fields, most significant first').fill('time:99');
  await page.getByLabel('Tick (ms)').fill('0');
  await page.getByLabel('IDs, one a line (up to 10,000)').fill('x\ny');
  await page.getByRole('button', { name: 'Decode all' }).click();
  await waitText(page, '#layout-spec-error', errorOf(() => snowflake.parseLayout('time:99')).message);
  assertNoErrors();
});

test('accessibility: axe finds nothing in any view, light and dark, English and German', TEST, async (t) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const lang of ['en', 'de']) {
      // bypassCSP only so that axe's script can be injected; the page is the same.
      const { page, assertNoErrors } = await open(t, { query: `${EXAMPLE_QUERY}&lang=${lang}`, colorScheme, bypassCSP: true });
      const what = `${colorScheme}, ${lang}`;
      await axe(page, `the first view (${what})`);
      // Every part shown at once: errors, custom layout, decode, every layout, range, bulk, generated IDs.
      await page.fill('#compose-field-machine', '32');
      await page.fill('#decode-input', '175928847299117063');
      await page.fill('#range-from', '2024-01-01');
      await page.fill('#range-to', '2024-02-01');
      await page.click('#range-submit');
      await page.fill('#bulk-input', '4194439168\nbad');
      await page.click('#bulk-submit');
      await page.click('#generate-submit');
      await page.waitForSelector('#generate-list .generated-id');
      await page.selectOption('#settings-zone', 'other');
      await page.fill('#settings-zone-name', 'Europe/Berlin');
      await axe(page, `everything shown (${what})`);
      await page.selectOption('#layout-select', 'custom');
      await page.fill('#layout-spec', 'time:41,machine:30');
      await axe(page, `custom layout with an error (${what})`);
      assertNoErrors();
    }
  }
});

test('the saved page works from file:// with the network off; Generate is hidden', TEST, async (t) => {
  const { page, assertNoErrors, assertOffline } = await openSaved(t, EXAMPLE_QUERY);
  await waitText(page, '#result-id', '4194439168');
  assert.equal(await page.isVisible('#generate-form'), false);
  assert.match(await text(page, '#generate-offline'), /runs without a server/);
  await page.getByLabel('Machine ID').fill('31');
  await waitText(page, '#result-id', String(4194439168n - (1n << 12n) + (31n << 12n)));
  await page.getByLabel('ID', { exact: true }).fill('175928847299117063');
  await page.getByLabel('Layout', { exact: true }).selectOption('discord');
  await waitText(page, '#result-time', '2016-04-30T11:18:25.796Z');
  assert.ok(new URL(await page.getByLabel('Share link').inputValue()).protocol === 'file:');
  assertOffline();
  assertNoErrors();
  // The CSP stays in force: an injected inline script does not run (and
  // Chromium logs the refusal, which is why the check above comes first).
  const ran = await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true;';
    document.body.append(s);
    return window.__injected === true;
  });
  assert.equal(ran, false);
});

test('weight: the first view is one document under the budget, compressed', TEST, async (t) => {
  const loaded = [];
  const { page, assertNoErrors } = await open(t, { url: 'about:blank', ready: false });
  page.on('requestfinished', (r) => loaded.push(r));
  await page.goto(`${BASE}/`);
  await waitFor(page, '#result', (n) => n.dataset.state === 'ok', 'a result');
  const urls = loaded.map((r) => r.url()).filter((u) => !u.startsWith('data:'));
  assert.deepEqual(urls, [`${BASE}/`]);
  const body = (await (await loaded[0].response()).body()).toString('utf8');
  const block = /<script type="application\/gzip" id="snowflake-wasm">([^<]*)<\/script>/.exec(body);
  assert.ok(block, 'the page carries its module');
  const module = Buffer.from(block[1], 'base64').length;
  assert.ok(module < MODULE_BUDGET_BYTES, `the module is ${module} bytes gzipped; its budget is ${MODULE_BUDGET_BYTES}`);
  const own = gzipSync(body.replace(block[1], ''), { level: 9 }).length;
  assert.ok(own < BUDGET_GZIP_BYTES, `the page without its module is ${own} bytes gzipped; the budget is ${BUDGET_GZIP_BYTES}`);
  t.diagnostic(`the page ${own} bytes gzipped, its module ${module}, the whole ${gzipSync(body, { level: 9 }).length}`);
  const csp = (await loaded[0].response()).headers()['content-security-policy'];
  assert.match(csp, /frame-ancestors 'none'/);
  // WebAssembly may be compiled; no JavaScript from text, no inline script or style but by hash.
  assert.match(csp, /script-src 'sha256-[^']+' 'wasm-unsafe-eval';/);
  assert.doesNotMatch(csp, /'unsafe-(eval|inline|hashes)'/);
  assertNoErrors();
});

test('fits a phone and a desktop, light and dark; screenshots', TEST, async (t) => {
  for (const colorScheme of ['light', 'dark']) {
    const desktop = await open(t, { query: `${EXAMPLE_QUERY}`, colorScheme });
    await waitText(desktop.page, '#result-id', '4194439168');
    await desktop.page.fill('#decode-input', '1541815603606036480');
    await desktop.page.fill('#bulk-input', '4194439168\n1541815603606036480\nnot-an-id');
    await desktop.page.click('#bulk-submit');
    await desktop.page.click('#generate-submit');
    await desktop.page.waitForSelector('#generate-list .generated-id');
    await desktop.page.screenshot({ path: path.join(ARTIFACTS, `page-desktop-${colorScheme}.png`), fullPage: true });
    desktop.assertNoErrors();

    for (const lang of ['en', 'de']) {
      const phone = await open(t, { query: `${EXAMPLE_QUERY}&lang=${lang}`, colorScheme, viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
      await waitText(phone.page, '#result-id', '4194439168');
      await phone.page.fill('#decode-input', '1541815603606036480');
      await phone.page.fill('#bulk-input', '4194439168\nnot-an-id');
      await phone.page.click('#bulk-submit');
      const widths = await phone.page.evaluate(() => ({ html: document.documentElement.scrollWidth, body: document.body.scrollWidth }));
      assert.ok(widths.html <= 375 && widths.body <= 375, `${lang} ${colorScheme}: the page is ${widths.html}px wide`);
      const overlap = await phone.page.evaluate(() => {
        const a = document.querySelector('.brand').getBoundingClientRect();
        const b = document.querySelector('.header-controls').getBoundingClientRect();
        return !(a.bottom <= b.top || b.bottom <= a.top || a.right <= b.left || b.right <= a.left);
      });
      assert.equal(overlap, false, `${lang}: the header's controls cover the title`);
      if (lang === 'en') await phone.page.screenshot({ path: path.join(ARTIFACTS, `page-phone-${colorScheme}.png`), fullPage: true });
      phone.assertNoErrors();
    }
  }
});

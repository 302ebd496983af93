// The page's engine (assets/engine.js, idtext.js, many.js) and its messages
// (assets/strings.js) against testdata/vectors.json, the file the Rust tests
// read too: every compose case composes to its ID, decodes back to its parts
// and prints its text forms; every error names the same field and value, in
// the same words in English and German; every reading case gets the same
// verdict. The presets come from the saved page's data block (the core's
// table, as the page gets it). Runs in Node (the modules need no DOM);
// page.test.mjs runs the same cases through the page in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as engine from '../../assets/engine.js';
import { parseId, textForms } from '../../assets/idtext.js';
import { csvField, csvText, decodeMany } from '../../assets/many.js';
import { errorMessage } from '../../assets/strings.js';
import { VECTORS, savedPresetTable } from './support/data.mjs';

const TABLE = await savedPresetTable();
const PRESETS = new engine.Presets(TABLE);
// The vector file's sections this file reads; a new one must be read here too.
const READ = ['compose', 'errors', 'presets', 'readings'];

function layoutOf(c) {
  let layout = PRESETS.parseLayout(c.layout);
  if (c.epoch_ms !== undefined) layout = engine.withEpoch(layout, BigInt(c.epoch_ms));
  if (c.tick_ms !== undefined) layout = engine.withTick(layout, BigInt(c.tick_ms));
  return layout;
}

test('the vector file covers every preset, both limits and a narrow layout', () => {
  const layouts = new Set(VECTORS.compose.map((c) => c.layout));
  for (const name of PRESETS.names) assert.ok(layouts.has(name), name);
  assert.ok(VECTORS.compose.some((c) => c.id === String((1n << 63n) - 1n)));
  assert.ok(VECTORS.compose.some((c) => c.id === String((1n << 64n) - 1n)));
  assert.ok(VECTORS.compose.some((c) => !layoutOf(c).signBit && layoutOf(c).totalBits < 63));
  assert.ok(VECTORS.errors.length >= 20);
});

for (const c of VECTORS.compose) {
  const name = `${c.layout}${c.epoch_ms !== undefined ? ` epoch ${c.epoch_ms}` : ''}${c.tick_ms !== undefined ? ` tick ${c.tick_ms}` : ''} at ${c.timestamp_ms} → ${c.id}`;
  test(`compose and decode: ${name}`, () => {
    const layout = layoutOf(c);
    const values = Object.fromEntries(Object.entries(c.fields).map(([k, v]) => [k, BigInt(v)]));
    const id = engine.compose(layout, BigInt(c.timestamp_ms), values);
    assert.equal(typeof id, 'bigint');
    assert.equal(id.toString(), c.id);
    const decoded = engine.decode(layout, parseId(c.id));
    assert.equal(decoded.timestampMs, BigInt(c.timestamp_ms));
    assert.deepEqual(
      Object.fromEntries(decoded.fields.map(([k, v]) => [k, v.toString()])),
      Object.fromEntries(Object.entries(c.fields).map(([k, v]) => [k, String(v)])),
    );
    assert.equal(decoded.segments.reduce((n, s) => n + s.bits, 0), 64);
    assert.equal(BigInt(`0b${decoded.segments.map((s) => s.binary).join('')}`), id);
    if (c.text) {
      assert.deepEqual(textForms(id), c.text);
      for (const format of ['base32', 'base62', 'base58']) assert.equal(parseId(c.text[format], format), id, format);
      assert.equal(parseId(c.text.hex), id);
    }
  });
}

function attempt(e) {
  if (e.op === 'layout') {
    let layout = PRESETS.parseLayout(e.spec);
    if (e.epoch_ms !== undefined) layout = engine.withEpoch(layout, BigInt(e.epoch_ms));
    if (e.tick_ms !== undefined) layout = engine.withTick(layout, BigInt(e.tick_ms));
    return layout;
  }
  const layout = PRESETS.parseLayout(e.layout);
  if (e.op === 'decode') return engine.decode(layout, parseId(e.id));
  const values = {};
  for (const [name, value] of Object.entries(e.fields)) {
    values[name] = typeof value === 'string' ? engine.parseValue(layout, name, value) : BigInt(value);
  }
  return engine.compose(layout, BigInt(e.timestamp_ms), values);
}

for (const e of VECTORS.errors) {
  test(`error: ${e.op} ${e.layout} → ${e.field} ${e.value}`, () => {
    let caught;
    try {
      attempt(e);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof engine.EngineError, `expected an EngineError, got ${caught}`);
    assert.equal(caught.field, e.field);
    assert.equal(caught.value, e.value);
    assert.equal(errorMessage('en', caught, { iso: engine.isoOf }), e.en);
    assert.equal(errorMessage('de', caught, { iso: engine.isoOf }), e.de);
  });
}

test('isoOf matches the core over the whole i64 range', () => {
  assert.equal(engine.isoOf(3487858230208n), '2080-07-10T17:30:30.208Z');
  assert.equal(engine.isoOf(-1n), '1969-12-31T23:59:59.999Z');
  assert.equal(engine.isoOf(951782400000n), '2000-02-29T00:00:00.000Z');
  assert.equal(engine.isoOf((1n << 63n) - 1n), '+292278994-08-17T07:12:55.807Z');
  assert.equal(engine.isoOf(-(1n << 63n)), '-292275055-05-16T16:47:04.192Z');
  for (const ms of [0, 1288834974657, 1700000000123, -86400001, 253402300799999]) {
    assert.equal(engine.isoOf(BigInt(ms)), new Date(ms).toISOString());
  }
});

test('text forms keep number order as text order at fixed width', () => {
  const ids = [0n, 1n, 31n, 32n, 61n, 62n, 4194439168n, (1n << 53n) - 1n, 1n << 63n, (1n << 64n) - 1n];
  for (const form of ['base32', 'base62']) {
    const texts = ids.map((id) => textForms(id)[form]);
    assert.deepEqual([...texts].sort(), texts, form);
    assert.ok(texts.every((t) => t.length === texts[0].length), form);
  }
  // Crockford: any case, I and L as 1, O as 0.
  assert.equal(parseId('7zzzzzzzzzzzz', 'base32'), (1n << 63n) - 1n);
  assert.equal(parseId('0000000000O1L', 'base32'), parseId('0000000000011', 'base32'));
  assert.throws(() => parseId('G000000000000', 'base32'), { code: 'id.tooBig' });
  assert.throws(() => parseId('U', 'base32'), { code: 'id.notBase32' });
  assert.throws(() => parseId('0', 'base58'), { code: 'id.notBase58' });
  assert.throws(() => parseId('LygHa16AHYG', 'base62'), { code: 'id.tooBig' });
  assert.equal(parseId('LygHa16AHYF', 'base62'), (1n << 64n) - 1n);
});

test('js53 is the preset that fits a JavaScript number', () => {
  const js53 = PRESETS.get('js53');
  assert.equal(js53.spec, 'time:41,worker:6,sequence:6');
  assert.equal(js53.epochMs, 1704067200000n);
  assert.equal(js53.maxId, (1n << 53n) - 1n);
  assert.ok(js53.jsSafe);
  assert.ok(!PRESETS.get('twitter').jsSafe);
  assert.deepEqual(engine.decode(js53, 5n).segments.map((s) => [s.name, s.bits]), [['unused', 11], ['timestamp', 41], ['worker', 6], ['sequence', 6]]);
});

test('bounds cover every ID of the window, floored to the tick', () => {
  const twitter = PRESETS.get('twitter');
  const { first, last } = engine.bounds(twitter, 1288834975657n, 1288834975657n);
  assert.equal(first, 1000n << 22n);
  assert.equal(last, (1000n << 22n) | ((1n << 22n) - 1n));
  assert.throws(() => engine.bounds(twitter, 2000000000000n, 1500000000000n), { code: 'window.reversed', field: 'from' });
  assert.throws(() => engine.bounds(twitter, 0n, 1500000000000n), { code: 'timestamp.beforeEpoch', field: 'from' });
});


test('the vector file has no section this file does not read', () => {
  const unread = Object.keys(VECTORS).filter((key) => !READ.includes(key));
  assert.deepEqual(unread, [], 'vectors.json has cases that engine.test.mjs leaves unread: read them here');
});

// ---- presets: the core's table, as the page carries it ---------------------

test("the page's presets are the core's table, as vectors.json states it", { skip: !VECTORS.presets && 'vectors.json has no presets yet' }, () => {
  const page = TABLE.presets.map((p) => ({
    name: p.name,
    spec: p.spec,
    epoch_ms: p.epoch_ms,
    tick_ms: p.tick_ms,
    sequence: p.sequence,
    platform: p.platform?.name ?? null,
    launched_ms: p.platform?.launched_ms ?? null,
  }));
  const core = VECTORS.presets.map(({ name, spec, epoch_ms, tick_ms, sequence, platform, launched_ms }) => ({ name, spec, epoch_ms, tick_ms, sequence, platform, launched_ms }));
  assert.deepEqual(page, core);
  assert.equal(TABLE.future_slack_ms, 60000);
});

test('the engine builds each preset from the table, platform and all', () => {
  assert.ok(TABLE.presets.length >= 1);
  assert.deepEqual(PRESETS.names, TABLE.presets.map((p) => p.name));
  for (const entry of TABLE.presets) {
    const layout = PRESETS.get(entry.name.toUpperCase());
    assert.equal(layout.spec, entry.spec);
    assert.equal(layout.epochMs, BigInt(entry.epoch_ms));
    assert.equal(layout.tickMs, BigInt(entry.tick_ms));
    assert.equal(layout.sequence, entry.sequence);
    assert.equal(layout.platform.name, entry.platform.name);
    assert.equal(layout.platform.launchedMs, BigInt(entry.platform.launched_ms));
    // Another epoch or tick is no longer the platform's layout, as in the core.
    assert.equal(engine.withEpoch(layout, layout.epochMs + 1n).platform, null);
    assert.equal(engine.withTick(layout, layout.tickMs + 1n).platform, null);
    assert.equal(engine.withEpoch(layout, layout.epochMs).platform, layout.platform);
  }
  assert.equal(PRESETS.get('nope'), null);
  assert.throws(() => PRESETS.parseLayout('nope'), { code: 'layout.unknown' });
});

test('a table that is not the core\'s is refused when the page starts', () => {
  const entry = TABLE.presets[0];
  const table = (changes) => ({ ...TABLE, presets: [{ ...entry, ...changes }] });
  assert.throws(() => new engine.Presets(table({ spec: 'time:40,x:23' })), /spec time:40,x:23 is not its fields/);
  assert.throws(() => new engine.Presets(table({ epoch_ms: 2 ** 53 })), /epoch_ms is 9007199254740992, not an exact whole number/);
  assert.throws(() => new engine.Presets(table({ platform: { name: 'X', launched_ms: 1.5 } })), /launched_ms is 1.5/);
  assert.throws(() => new engine.Presets(table({ spec: undefined, fields: [['time', 5]] })), { code: 'layout.reserved' });
  assert.throws(() => new engine.Presets({ ...TABLE, future_slack_ms: '60s' }), /future_slack_ms/);
  assert.equal(new engine.Presets(table({ epoch_ms: String(entry.epoch_ms) })).layouts[0].epochMs, BigInt(entry.epoch_ms));
});

// ---- verdicts ----------------------------------------------------------------

// The reasons as vectors.json names them.
const WHY = { future: 'future', beforePlatform: 'before', bits: null };

function readings(id, nowMs) {
  return PRESETS.decodeEverywhere(id, nowMs).map((r) => ({
    layout: r.layout.name,
    verdict: r.verdict,
    timestamp_ms: r.decoded ? Number(r.decoded.timestampMs) : null,
    why: r.reason ? WHY[r.reason] : null,
  }));
}

for (const c of VECTORS.readings || []) {
  test(`reading: ${c.note} (${c.id})`, () => {
    assert.deepEqual(readings(parseId(c.id), BigInt(c.now_ms)), c.readings);
  });
}

test('verdicts follow the table: the edges of each platform and of now', () => {
  const now = 1767225600000n; // 2026-01-01
  let checked = 0;
  for (const layout of PRESETS.all()) {
    const at = (ms) => {
      const id = engine.compose(layout, ms, {});
      return PRESETS.decodeEverywhere(id, now).find((r) => r.layout === layout);
    };
    const floor = (ms) => engine.timestampOf(layout, engine.timeUnits(layout, ms));
    const launched = layout.platform.launchedMs;
    // A tick that starts before the launch day but ends in it still reads as before.
    if (launched > layout.epochMs) {
      const before = at(floor(launched - 1n));
      assert.deepEqual([before.verdict, before.reason], ['implausible', 'beforePlatform'], `${layout.name} before`);
      checked += 1;
    }
    const on = at(launched > layout.epochMs ? launched : layout.epochMs);
    assert.equal(on.verdict, 'possible', `${layout.name} on its first day`);
    const edge = now + PRESETS.futureSlackMs;
    if (edge <= layout.lastMs) {
      assert.equal(at(floor(edge)).verdict, 'possible', `${layout.name} at the slack`);
      const past = at(floor(edge) + layout.tickMs);
      assert.deepEqual([past.verdict, past.reason], ['implausible', 'future'], `${layout.name} past the slack`);
    }
  }
  assert.ok(checked >= 1, 'no preset begins after its epoch: the before-platform rule went untested');
  // Discord's documentation example: possible under discord, impossible
  // under js53 (58 bits), in 2055 under mastodon's Unix epoch.
  const rows = Object.fromEntries(PRESETS.decodeEverywhere(175928847299117063n, now).map((r) => [r.layout.name, r]));
  assert.equal(rows.discord.verdict, 'possible');
  assert.equal(rows.discord.decoded.timestampMs, 1462015105796n);
  assert.deepEqual([rows.js53.verdict, rows.js53.reason], ['impossible', 'bits']);
  assert.deepEqual([rows.mastodon.verdict, rows.mastodon.reason], ['implausible', 'future']);
});

// ---- many IDs, and CSV -------------------------------------------------------

test('bulk decode keeps going past bad lines and refuses more than 10,000', () => {
  const twitter = PRESETS.get('twitter');
  const rows = decodeMany(twitter, '4194439168\n\nnope\n0x10\n');
  assert.deepEqual(rows.map((r) => [r.line, r.error?.code ?? 'ok']), [[1, 'ok'], [3, 'id.notDecimal'], [4, 'ok']]);
  const many = Array.from({ length: 10001 }, (_, i) => String(i)).join('\n');
  assert.throws(() => decodeMany(twitter, many), { code: 'bulk.tooMany' });
  assert.equal(decodeMany(twitter, many.split('\n').slice(1).join('\n')).length, 10000);
});

test('CSV cells are quoted when they must be, and never read as formulas', () => {
  assert.equal(csvField('a,"b"'), '"a,""b"""');
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField(4194439168n), '4194439168');
  // OWASP's rule: a cell that begins with = + - @, a tab or a carriage
  // return gets a single quote in front and is quoted.
  const hostile = {
    '=1+1': `"'=1+1"`,
    "+cmd|'/c calc'!A0": `"'+cmd|'/c calc'!A0"`,
    '@SUM(A1)': `"'@SUM(A1)"`,
    '-2+3': `"'-2+3"`,
    '\t=1+1': `"'\t=1+1"`,
    '\r=1+1': `"'\r=1+1"`,
    '=HYPERLINK("http://x","y")': `"'=HYPERLINK(""http://x"",""y"")"`,
    '-1': `"'-1"`,
  };
  for (const [cell, expected] of Object.entries(hostile)) assert.equal(csvField(cell), expected, JSON.stringify(cell));
  // Only the first character counts.
  assert.equal(csvField('1+1'), '1+1');
  assert.equal(csvField('a=b'), 'a=b');
  assert.equal(csvText([['a', '=b'], ['c', 'd']]), `a,"'=b"\r\nc,d\r\n`);
});

// The page's engine (assets/engine.js) and its messages (assets/strings.js)
// against testdata/vectors.json, the file the Rust tests read too: every
// compose case composes to its ID, decodes back to its parts and prints its
// text forms; every error names the same field and value, in the same words
// in English and German. Runs in Node (the modules need no DOM); page.test.mjs
// runs the same cases through the page in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as engine from '../../assets/engine.js';
import { errorMessage } from '../../assets/strings.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const VECTORS = JSON.parse(await readFile(path.resolve(HERE, '../../../../testdata/vectors.json'), 'utf8'));

function layoutOf(c) {
  let layout = engine.parseLayout(c.layout);
  if (c.epoch_ms !== undefined) layout = engine.withEpoch(layout, BigInt(c.epoch_ms));
  if (c.tick_ms !== undefined) layout = engine.withTick(layout, BigInt(c.tick_ms));
  return layout;
}

test('the vector file covers every preset, both limits and a narrow layout', () => {
  const layouts = new Set(VECTORS.compose.map((c) => c.layout));
  for (const name of engine.PRESETS) assert.ok(layouts.has(name), name);
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
    const decoded = engine.decode(layout, engine.parseId(c.id));
    assert.equal(decoded.timestampMs, BigInt(c.timestamp_ms));
    assert.deepEqual(
      Object.fromEntries(decoded.fields.map(([k, v]) => [k, v.toString()])),
      Object.fromEntries(Object.entries(c.fields).map(([k, v]) => [k, String(v)])),
    );
    assert.equal(decoded.segments.reduce((n, s) => n + s.bits, 0), 64);
    assert.equal(BigInt(`0b${decoded.segments.map((s) => s.binary).join('')}`), id);
    if (c.text) {
      assert.deepEqual(engine.textForms(id), c.text);
      for (const format of ['base32', 'base62', 'base58']) assert.equal(engine.parseId(c.text[format], format), id, format);
      assert.equal(engine.parseId(c.text.hex), id);
    }
  });
}

function attempt(e) {
  if (e.op === 'layout') {
    let layout = engine.parseLayout(e.spec);
    if (e.epoch_ms !== undefined) layout = engine.withEpoch(layout, BigInt(e.epoch_ms));
    if (e.tick_ms !== undefined) layout = engine.withTick(layout, BigInt(e.tick_ms));
    return layout;
  }
  const layout = engine.parseLayout(e.layout);
  if (e.op === 'decode') return engine.decode(layout, engine.parseId(e.id));
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
    const texts = ids.map((id) => engine.textForms(id)[form]);
    assert.deepEqual([...texts].sort(), texts, form);
    assert.ok(texts.every((t) => t.length === texts[0].length), form);
  }
  // Crockford: any case, I and L as 1, O as 0.
  assert.equal(engine.parseId('7zzzzzzzzzzzz', 'base32'), (1n << 63n) - 1n);
  assert.equal(engine.parseId('0000000000O1L', 'base32'), engine.parseId('0000000000011', 'base32'));
  assert.throws(() => engine.parseId('G000000000000', 'base32'), { code: 'id.tooBig' });
  assert.throws(() => engine.parseId('U', 'base32'), { code: 'id.notBase32' });
  assert.throws(() => engine.parseId('0', 'base58'), { code: 'id.notBase58' });
  assert.throws(() => engine.parseId('LygHa16AHYG', 'base62'), { code: 'id.tooBig' });
  assert.equal(engine.parseId('LygHa16AHYF', 'base62'), (1n << 64n) - 1n);
});

test('js53 is the preset that fits a JavaScript number', () => {
  const js53 = engine.preset('js53');
  assert.equal(js53.spec, 'time:41,worker:6,sequence:6');
  assert.equal(js53.epochMs, 1704067200000n);
  assert.equal(js53.maxId, (1n << 53n) - 1n);
  assert.ok(js53.jsSafe);
  assert.ok(!engine.preset('twitter').jsSafe);
  assert.deepEqual(engine.decode(js53, 5n).segments.map((s) => [s.name, s.bits]), [['unused', 11], ['timestamp', 41], ['worker', 6], ['sequence', 6]]);
});

test('bounds cover every ID of the window, floored to the tick', () => {
  const twitter = engine.preset('twitter');
  const { first, last } = engine.bounds(twitter, 1288834975657n, 1288834975657n);
  assert.equal(first, 1000n << 22n);
  assert.equal(last, (1000n << 22n) | ((1n << 22n) - 1n));
  assert.throws(() => engine.bounds(twitter, 2000000000000n, 1500000000000n), { code: 'window.reversed', field: 'from' });
  assert.throws(() => engine.bounds(twitter, 0n, 1500000000000n), { code: 'timestamp.beforeEpoch', field: 'from' });
});

test('every preset at once: possible, implausible, impossible', () => {
  const now = 1767225600000n; // 2026-01-01
  const discordId = 175928847299117063n;
  const rows = Object.fromEntries(engine.decodeEverywhere(discordId, now).map((r) => [r.layout.name, r]));
  assert.equal(rows.discord.verdict, 'possible');
  assert.equal(rows.discord.decoded.timestampMs, 1462015105796n);
  assert.equal(rows.js53.verdict, 'impossible');
  assert.equal(rows.mastodon.verdict, 'implausible'); // 2055
  assert.equal(rows.mastodon.reason, 'future');
  // 1,000 ms after Discord's epoch: 2015-01-01, months before Discord opened.
  const early = Object.fromEntries(engine.decodeEverywhere(4194439168n, now).map((r) => [r.layout.name, r]));
  assert.equal(early.discord.verdict, 'implausible');
  assert.equal(early.discord.reason, 'beforePlatform');
  assert.equal(early.twitter.verdict, 'possible');
});

test('bulk decode keeps going past bad lines and refuses more than 10,000', () => {
  const rows = engine.decodeMany(engine.preset('twitter'), '4194439168\n\nnope\n0x10\n');
  assert.deepEqual(rows.map((r) => [r.line, r.error?.code ?? 'ok']), [[1, 'ok'], [3, 'id.notDecimal'], [4, 'ok']]);
  const many = Array.from({ length: 10001 }, (_, i) => String(i)).join('\n');
  assert.throws(() => engine.decodeMany(engine.preset('twitter'), many), { code: 'bulk.tooMany' });
  assert.equal(engine.decodeMany(engine.preset('twitter'), many.split('\n').slice(1).join('\n')).length, 10000);
  assert.equal(engine.csvField('a,"b"'), '"a,""b"""');
});

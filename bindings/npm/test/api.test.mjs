// The package's own edges: the forms an ID, a time and a layout may be
// given in, which values come back as Numbers and which as BigInts, the
// breakdown's JSON, and refusals in the core's words with kind and field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sf from '../index.js';
import { thrown } from './support.mjs';

const TWEET = 1541815603606036480n;

test('an ID as a BigInt, a decimal or 0x string, or a Number below 2^53', () => {
  const want = sf.decode(TWEET).id;
  assert.equal(sf.decode(String(TWEET)).id, want);
  assert.equal(sf.decode('0x1565a11f6217a000').id, want);
  assert.equal(sf.decode(4194439168).id, '4194439168');
  const rounded = thrown(() => sf.decode(1541815603606036480));
  assert.equal(rounded.field, 'id');
  assert.match(rounded.message, /past 2\^53/);
  assert.equal(thrown(() => sf.decode(-1n)).message, thrown(() => sf.fromText('-1')).message);
  assert.match(thrown(() => sf.decode(1n << 64n)).message, /does not fit in 64 bits/);
  assert.match(thrown(() => sf.decode(1.5)).message, /^id "1.5" is not decimal/);
});

test('the breakdown is the API\'s JSON, in its order; its value and layout besides', () => {
  const d = sf.decode(TWEET);
  assert.deepEqual(Object.keys(d.toJSON()), ['id', 'layout', 'timestamp_ms', 'time', 'fields', 'binary', 'segments', 'text']);
  assert.equal(d.value, TWEET);
  assert.equal(d.layoutUsed, sf.layouts[0]);
  assert.equal(d.layout, 'twitter');
  assert.deepEqual(d.fields, { datacenter: 11, machine: 26, sequence: 0 });
  assert.equal(typeof d.timestamp_ms, 'number');
  assert.equal(d.time, '2022-06-28T16:07:40.105Z');
});

test('a field wider than 53 bits, and times past 2^53 ms, come back as BigInts', () => {
  const wide = sf.parseLayout('time:2,big:60,sequence:2');
  const id = sf.compose({ timestamp: 1, fields: { big: (1n << 60n) - 1n, sequence: 3 } }, sf.parseLayout('time:2,big:60,sequence:2', { epoch: 0 }));
  const d = sf.decode(id, wide);
  assert.equal(d.fields.big, (1n << 60n) - 1n);
  assert.equal(d.fields.sequence, 3);
  assert.equal(d.segments.find((s) => s.name === 'big').value, (1n << 60n) - 1n);
  const far = sf.parseLayout('time:62,sequence:1', { epoch: 0, tickMs: 1 });
  const late = sf.decode((1n << 62n) - 1n, far);
  assert.equal(typeof late.timestamp_ms, 'bigint');
  assert.equal(late.timestamp_ms, (1n << 61n) - 1n);
  assert.equal(late.time, sf.formatTime((1n << 61n) - 1n));
});

test('a layout as the command reads it: a preset, a spec, an epoch as ms, an RFC 3339 date or a Date, a tick', () => {
  const baidu = sf.parseLayout('time:29,worker:21,sequence:13', { epoch: new Date('2016-09-20T00:00:00Z'), tickMs: 1000 });
  assert.equal(baidu.epochMs, 1474329600000n);
  for (const epoch of ['2016-09-20T00:00:00Z', '2016-09-20T08:00:00+08:00', ' 1474329600000 ']) {
    assert.equal(sf.parseLayout('time:29,worker:21,sequence:13', { epoch }).epochMs, 1474329600000n, epoch);
  }
  assert.equal(baidu.tickMs, 1000n);
  assert.equal(baidu.platform, null);
  assert.equal(sf.parseLayout('twitter'), sf.layouts[0]);
  assert.equal(sf.parseLayout('twitter', { epoch: 0 }).platform, null);
  assert.deepEqual(sf.layouts[0].fields.map((f) => [f.name, f.bits, f.max, f.shift]), [['datacenter', 5, 31n, 17], ['machine', 5, 31n, 12], ['sequence', 12, 4095n, 0]]);
  assert.equal(JSON.stringify(sf.layouts[0]).includes('"spec":"time:41,datacenter:5,machine:5,sequence:12"'), true);
  const tick = thrown(() => sf.parseLayout('twitter', { tickMs: 'x' }));
  assert.equal(tick.field, 'tick_ms');
  assert.equal(tick.message, 'tick_ms x is not allowed; a tick is a whole number of milliseconds, at least 1');
  for (const notATime of [2 ** 60, new Date(NaN), ['0']]) {
    assert.equal(thrown(() => sf.parseLayout('twitter', { epoch: notATime })).field, 'epoch', String(notATime));
  }
  assert.equal(thrown(() => sf.formatTime(2 ** 62)).field, 'timestamp');
  assert.equal(thrown(() => sf.readings(1n, { now: 2 ** 60 })).field, 'now');
  const epoch = thrown(() => sf.parseLayout('twitter', { epoch: 'yesterday' }));
  assert.equal(epoch.field, 'epoch');
  assert.match(epoch.message, /^epoch "yesterday" is not a time/);
  assert.match(thrown(() => sf.parseLayout('flickr')).message, /^unknown layout "flickr"; use a preset \(twitter, discord/);
});

test('parseTime reads a time as the command reads --timestamp', () => {
  assert.equal(sf.parseTime('2010-11-04T02:42:55.657999+01:00'), 1288834975657n);
  assert.equal(sf.parseTime(' 1288834975657 '), 1288834975657n);
  assert.equal(sf.parseTime('2016-12-31T23:59:60Z'), 1483228799000n);
  assert.equal(sf.parseTime('0050-01-01T00:00:00Z'), -60589296000000n);
  const error = thrown(() => sf.parseTime('tomorrow', 'from'));
  assert.equal(error.field, 'from');
  assert.match(error.message, /^from "tomorrow" is not a time/);
  assert.equal(thrown(() => sf.parseTime(1288834975657)).field, 'timestamp');
});

test('compose: fields as Numbers, BigInts or text, the time as ms, a BigInt, digits, an RFC 3339 date or a Date, now when left out', () => {
  const want = 4194439168n;
  const fields = { datacenter: 1, machine: 1, sequence: 0 };
  const times = [1288834975657, 1288834975657n, '1288834975657', new Date(1288834975657)];
  // As the command reads --timestamp: RFC 3339 with any offset, the fraction cut to ms.
  times.push('2010-11-04T01:42:55.657Z', '2010-11-04T02:42:55.657999+01:00', sf.formatTime(1288834975657));
  for (const timestamp of times) {
    assert.equal(sf.compose({ timestamp, fields }), want);
  }
  assert.equal(sf.compose({ timestamp: 1288834975657, fields: { datacenter: 1n, machine: '1' } }), want);
  const before = Date.now();
  const now = sf.decode(sf.compose()).timestamp_ms;
  assert.ok(now >= before && now <= Date.now());
  const bad = [
    [{ fields: { machine: 32 } }, 'machine', 'machine 32 is out of range: 0 to 31 (5 bits)'],
    [{ fields: { machine: -1 } }, 'machine', 'machine -1 is out of range: 0 to 31 (5 bits)'],
    [{ fields: { machine: 1.5 } }, 'machine', 'machine "1.5" is not a whole number; allowed is 0 to 31 (5 bits)'],
    [{ fields: { rack: 1 } }, 'rack', 'the layout has no field "rack"; its fields are datacenter, machine, sequence'],
    [{ timestamp: 0 }, 'timestamp', null],
    [{ timestamp: 'soon' }, 'timestamp', null],
    [{ timestamp: '2023-02-29T00:00:00Z' }, 'timestamp', 'timestamp "2023-02-29T00:00:00Z" is not a time; give Unix milliseconds or an RFC 3339 date such as 2024-01-31T12:00:00Z'],
    [{ timestamp: '99999999999999999999' }, 'timestamp', null],
    // No text to read: a Number past 2^53 (its digits name another time), an array.
    [{ timestamp: 2 ** 60 }, 'timestamp', 'timestamp "1152921504606847000" is not a time; give Unix milliseconds or an RFC 3339 date such as 2024-01-31T12:00:00Z'],
    [{ timestamp: 1.5 }, 'timestamp', null],
    [{ timestamp: ['2024-01-31T12:00:00Z'] }, 'timestamp', null],
    [{ timestamp: new Date(NaN) }, 'timestamp', null],
  ];
  for (const [parts, field, message] of bad) {
    const error = thrown(() => sf.compose({ timestamp: 1288834975657, ...parts }));
    assert.equal(error.field, field, JSON.stringify(parts));
    if (message) assert.equal(error.message, message);
  }
});

test('compose with Numbers answers with the ID itself, and IDs at and above 2^63 come back whole', () => {
  // Numbers take the path whose answer is the ID as a signed 64-bit value:
  // -1 (a refusal, or the ID 2^64 - 1) and the IDs of 2^63 and up must
  // come back as the unsigned ID, as BigInt fields give them.
  const wide = sf.parseLayout('time:44,node:8,sequence:12', { epoch: 0 });
  const last = Number(wide.lastMs);
  for (const [timestamp, node, sequence] of [[last, 255, 4095], [last, 255, 4094], [2 ** 43, 0, 0], [2 ** 43 - 1, 255, 4095], [0, 0, 0]]) {
    const byNumbers = sf.compose({ timestamp, fields: { node, sequence } }, wide);
    const byBigInts = sf.compose({ timestamp: BigInt(timestamp), fields: { node: BigInt(node), sequence: BigInt(sequence) } }, wide);
    assert.equal(byNumbers, byBigInts, `${timestamp} ${node} ${sequence}`);
    assert.ok(byNumbers >= 0n);
  }
  assert.equal(sf.compose({ timestamp: last, fields: { node: 255, sequence: 4095 } }, wide), 2n ** 64n - 1n);
  assert.equal(sf.compose({ timestamp: 2 ** 43, fields: { node: 0, sequence: 0 } }, wide), 2n ** 63n);
});

test('bounds, readings and text forms in the API\'s shapes', () => {
  const window = sf.bounds(1288834975657, new Date(1288834975657));
  assert.deepEqual(window, { layout: 'twitter', from_ms: 1288834975657, from: '2010-11-04T01:42:55.657Z', to_ms: 1288834975657, to: '2010-11-04T01:42:55.657Z', first: String(1000n << 22n), last: String((1000n << 22n) | ((1n << 22n) - 1n)) });
  assert.equal(thrown(() => sf.bounds(2, 1)).field, 'from');
  const all = sf.readings(TWEET, { now: 1735689600000 });
  assert.deepEqual(all.readings.map((r) => r.layout), sf.layouts.map((l) => l.name));
  for (const form of sf.forms) assert.equal(sf.fromText(sf.toText(TWEET, form), form), TWEET, form);
  assert.equal(sf.toText(4194439168n, 'base62'), '000004ZrREe');
  assert.equal(thrown(() => sf.toText(1n, 'base64')).message, 'format base64 is not allowed; a text form is decimal, hex, base32, base62 or base58');
  assert.equal(sf.fromText('3xo44oo', 'base32'), 4194439168n);
});

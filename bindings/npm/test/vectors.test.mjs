// The shared vectors (testdata/vectors.json) through the package: every
// compose case composes to its ID and decodes back to its time, fields,
// segments and text forms; every error case fails on the field it names,
// in words that name its value; every reading case gets the verdicts the
// vectors give; the presets are the vectors' presets, in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sf from '../index.js';
import { VECTORS, attemptVector, thrown, vectorLayout } from './support.mjs';

// The sections of the vector file read here: a new one must be read here too.
const READ = ['compose', 'errors', 'presets', 'readings'];

test('every section of the vector file is read here', () => {
  assert.deepEqual(Object.keys(VECTORS).sort(), [...READ].sort());
});

test('the presets are the vectors\' presets, in order, with their platforms', () => {
  assert.deepEqual(
    sf.layouts.map((l) => l.name),
    VECTORS.presets.map((p) => p.name),
  );
  for (const [layout, p] of sf.layouts.map((l, i) => [l, VECTORS.presets[i]])) {
    assert.equal(layout.spec, p.spec);
    assert.equal(layout.epochMs, BigInt(p.epoch_ms));
    assert.equal(layout.tickMs, BigInt(p.tick_ms));
    assert.equal(layout.sequence, p.sequence);
    assert.equal(layout.platform.name, p.platform);
    assert.equal(layout.platform.launched_ms, p.launched_ms);
    assert.equal(layout.platform.launched.slice(0, 10), p.launched);
  }
});

for (const c of VECTORS.compose) {
  const name = `${c.layout}${c.epoch_ms !== undefined ? ` epoch ${c.epoch_ms}` : ''}${c.tick_ms !== undefined ? ` tick ${c.tick_ms}` : ''} at ${c.timestamp_ms} → ${c.id}`;
  test(`compose and decode: ${name}`, () => {
    const layout = vectorLayout(c.layout, c);
    // Fields as Numbers, as BigInts and as text: the same ID each way.
    const asBig = Object.fromEntries(Object.entries(c.fields).map(([k, v]) => [k, BigInt(v)]));
    const asText = Object.fromEntries(Object.entries(c.fields).map(([k, v]) => [k, String(v)]));
    for (const fields of [c.fields, asBig, asText]) {
      assert.equal(sf.compose({ timestamp: c.timestamp_ms, fields }, layout), BigInt(c.id));
    }
    assert.equal(sf.compose({ timestamp: BigInt(c.timestamp_ms), fields: c.fields }, layout), BigInt(c.id));
    assert.equal(sf.compose({ timestamp: new Date(c.timestamp_ms), fields: c.fields }, layout), BigInt(c.id));

    for (const id of [BigInt(c.id), c.id, c.text.hex]) {
      const d = sf.decode(id, layout);
      assert.equal(d.id, c.id);
      assert.equal(d.timestamp_ms, c.timestamp_ms);
      assert.equal(d.time, new Date(c.timestamp_ms).toISOString());
      assert.deepEqual(d.fields, c.fields);
      assert.deepEqual(d.text, c.text);
      assert.equal(d.segments.reduce((n, s) => n + s.bits, 0), 64);
      assert.equal(BigInt(`0b${d.segments.map((s) => s.binary).join('')}`), BigInt(c.id));
      assert.equal(d.binary, d.segments.map((s) => s.binary).join(''));
    }
    for (const [form, text] of Object.entries(c.text)) {
      assert.equal(sf.toText(c.id, form), text, form);
      assert.equal(sf.fromText(text, form), BigInt(c.id), form);
    }
    assert.equal(sf.toText(c.id), c.id);
  });
}

for (const e of VECTORS.errors) {
  test(`error: ${e.op} ${e.layout} → ${e.field} ${e.value}`, async () => {
    const error = thrown(() => attemptVector(e));
    assert.equal(error.kind, 'InvalidInput');
    assert.equal(error.field, e.field);
    assert.ok(error.message.includes(e.value), `${error.message} names ${e.value}`);
  });
}

for (const c of VECTORS.readings) {
  test(`readings: ${c.note}`, () => {
    const all = sf.readings(c.id, { now: c.now_ms });
    assert.equal(all.id, c.id);
    assert.equal(all.now_ms, c.now_ms);
    assert.deepEqual(
      all.readings.map((r) => ({ layout: r.layout, verdict: r.verdict, timestamp_ms: r.decoded ? r.decoded.timestamp_ms : null })),
      c.readings.map((r) => ({ layout: r.layout, verdict: r.verdict, timestamp_ms: r.timestamp_ms })),
    );
    for (const [got, want] of all.readings.map((r, i) => [r, c.readings[i]])) {
      if (want.why === 'future') assert.match(got.reason, /in the future/, got.layout);
      if (want.why === 'before') assert.match(got.reason, /before/, got.layout);
      if (want.verdict === 'possible') assert.equal(got.reason, null, got.layout);
    }
  });
}

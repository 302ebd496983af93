// The core's generator on JavaScript's clocks: IDs strictly increasing and
// of their node; a clock that steps back within the tolerance waited out,
// and beyond it refused with the size of the step until it catches up, as
// the core does; Date.now() and performance both; bad settings refused in
// the core's words. The clock is Date.now(), replaced by hand where a test
// moves time, and put back after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sf from '../index.js';
import { thrown } from './support.mjs';

const realNow = Date.now;

function withClock(read, fn) {
  Date.now = read;
  try {
    return fn();
  } finally {
    Date.now = realNow;
  }
}

test('IDs strictly increase and carry the node\'s fields and the time', () => {
  const generator = new sf.Generator('twitter', { node: { datacenter: 1, machine: 3 } });
  const before = Date.now();
  let last = -1n;
  for (let i = 0; i < 20000; i += 1) {
    const id = generator.next();
    assert.ok(id > last, `${id} after ${last}`);
    last = id;
  }
  const d = sf.decode(last);
  assert.equal(d.fields.datacenter, 1);
  assert.equal(d.fields.machine, 3);
  assert.ok(d.timestamp_ms >= before && d.timestamp_ms <= Date.now(), `${d.timestamp_ms}`);
  generator.free();
  assert.throws(() => generator.next(), /freed/);
});

test('a sequence used up within a millisecond moves on to the next', () => {
  let now = 1_700_000_000_000;
  let reads = 0;
  // Time moves a millisecond every 1,000 reads: the 4,096 IDs of one
  // millisecond run out before it does.
  const ids = withClock(() => now + Math.floor(reads++ / 1000), () => {
    const generator = new sf.Generator('twitter');
    return Array.from({ length: 5000 }, () => generator.next());
  });
  for (let i = 1; i < ids.length; i += 1) assert.ok(ids[i] > ids[i - 1]);
  const times = new Set(ids.map((id) => sf.decode(id).timestamp_ms));
  assert.ok(times.size >= 2, `${times.size} milliseconds`);
  for (const id of ids) assert.ok(sf.decode(id).timestamp_ms <= now + Math.floor(reads / 1000));
});

test('a clock stepped back past the tolerance is refused until it catches up', () => {
  const start = realNow() - 10_000;
  let now = start;
  withClock(() => now, () => {
    const generator = new sf.Generator('discord', { node: { worker: 2 } });
    const first = generator.next();
    now = start - 1000;
    const error = thrown(() => generator.next());
    assert.equal(error.kind, 'ClockBackwards');
    assert.equal(error.field, null);
    assert.match(error.message, /^the clock went backwards by 1000 ms, more than the 5 ms tolerated/);
    now = start + 1;
    const next = generator.next();
    assert.ok(next > first);
    assert.equal(sf.decode(next, 'discord').timestamp_ms, start + 1);
  });
});

test('a clock stepped back within the tolerance: IDs go on in the last millisecond, then wait for the clock', () => {
  const start = realNow() - 10_000;
  let back = null;
  // After the first ID the clock reads 200 ms behind and runs on from
  // there at the real clock's pace: the last millisecond's 4,095 numbers
  // are used up long before it is back, and the generator waits for it.
  const read = () => (back === null ? start : start - 200 + (realNow() - back));
  withClock(read, () => {
    const generator = new sf.Generator('twitter', { toleranceMs: 500 });
    const ids = [generator.next()];
    back = realNow();
    for (let i = 0; i < 4200; i += 1) ids.push(generator.next());
    const waited = realNow() - back;
    for (let i = 1; i < ids.length; i += 1) assert.ok(ids[i] > ids[i - 1]);
    const times = ids.map((id) => sf.decode(id).timestamp_ms);
    assert.equal(times[4095], start);
    assert.ok(times[4096] > start, `${times[4096]}`);
    assert.ok(waited >= 190, `the generator waited ${waited} ms for the clock`);
  });
});

test('performance as the clock', () => {
  const generator = new sf.Generator('sonyflake', { clock: 'performance', node: { machine: 7 } });
  const d = sf.decode(generator.next(), 'sonyflake');
  assert.ok(Math.abs(d.timestamp_ms - Date.now()) < 1000, `${d.time}`);
  assert.equal(d.fields.machine, 7);
  assert.equal(generator.clock, 'performance');
});

test('bad settings are refused in the core\'s words', () => {
  const unknownClock = thrown(() => new sf.Generator('twitter', { clock: 'sundial' }));
  assert.equal(unknownClock.field, 'clock');
  const machine = thrown(() => new sf.Generator('twitter', { node: { machine: 32 } }));
  assert.equal(machine.message, 'machine 32 is out of range: 0 to 31 (5 bits)');
  const sequence = thrown(() => new sf.Generator('twitter', { node: { sequence: 1 } }));
  assert.equal(sequence.field, 'sequence');
  const tolerance = thrown(() => new sf.Generator('twitter', { toleranceMs: 60_001 }));
  assert.match(tolerance.message, /60001/);
  const negative = thrown(() => new sf.Generator('twitter', { toleranceMs: -1 }));
  assert.equal(negative.field, 'tolerance_ms');
  const noSequence = thrown(() => new sf.Generator('time:41,machine:10'));
  assert.equal(noSequence.field, 'layout');
});

// The package agrees with the `snowflake` command, byte for byte: the JSON
// breakdown of every shared vector and of 10,000 random IDs under every
// preset (`snowflake decode --json -`, one process a preset), the error
// of every ID the command refuses, and the IDs `snowflake compose` makes
// from the vectors' parts and from random IDs' parts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as sf from '../index.js';
import { VECTORS, cli, random, thrown } from './support.mjs';

const RANDOM_IDS = 10000;
const COMPOSED_BY_THE_COMMAND = 40;
const run = cli();

// The command's decode of many IDs: one JSON record a line, a breakdown or
// {"line","input","error","field"}; it exits 2 when a line was bad.
function decodeByCommand(layout, ids) {
  const bin = process.env.SNOWFLAKE_BIN || new URL('../../../target/release/snowflake', import.meta.url).pathname;
  const out = spawnSync(bin, ['decode', '--layout', layout, '--json', '-'], { input: ids.join('\n'), encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.ok(out.status === 0 || out.status === 2, `decode exited ${out.status}: ${out.stderr}`);
  return out.stdout.trimEnd().split('\n');
}

// IDs that land inside and outside a layout: any 64 bits, and any of its width.
function randomIds(layout, seed) {
  const next = random(seed);
  return Array.from({ length: RANDOM_IDS }, (_, i) => (i % 4 === 0 ? next() : next() & layout.maxId));
}

// A vector's layout for the package, and the same as the command's arguments.
function layoutOf(c) {
  const options = {};
  const args = ['--layout', c.layout];
  if (c.epoch_ms !== undefined) {
    options.epoch = BigInt(c.epoch_ms);
    args.push('--epoch', String(BigInt(c.epoch_ms)));
  }
  if (c.tick_ms !== undefined) {
    options.tickMs = BigInt(c.tick_ms);
    args.push('--tick-ms', String(BigInt(c.tick_ms)));
  }
  return { layout: sf.parseLayout(c.layout, options), args };
}

test('every shared vector decodes to the command\'s JSON, byte for byte', () => {
  for (const c of VECTORS.compose) {
    const { layout, args } = layoutOf(c);
    assert.equal(JSON.stringify(sf.decode(c.id, layout)), run(['decode', ...args, '--json', c.id]).trimEnd(), c.id);
  }
});

test('every shared vector composes to the ID the command composes, with the same breakdown', () => {
  for (const c of VECTORS.compose) {
    const { layout, args: layoutArgs } = layoutOf(c);
    const args = ['compose', '--json', ...layoutArgs, '--timestamp', String(c.timestamp_ms)];
    for (const [name, value] of Object.entries(c.fields)) args.push('-f', `${name}=${value}`);
    const composed = sf.compose({ timestamp: c.timestamp_ms, fields: c.fields }, layout);
    assert.equal(JSON.stringify(sf.decode(composed, layout)), run(args).trimEnd(), c.id);
  }
});

test('every error vector: the package\'s words are the command\'s', async () => {
  for (const e of VECTORS.errors.filter((x) => x.op === 'decode')) {
    const error = thrown(() => sf.decode(e.id, e.layout));
    const [line] = decodeByCommand(e.layout, [e.id]);
    const record = JSON.parse(line);
    assert.equal(record.error, error.message, e.id);
    assert.equal(record.field, error.field, e.id);
  }
});

for (const [n, preset] of sf.layouts.entries()) {
  test(`${RANDOM_IDS} random IDs under ${preset.name}: the command's breakdown or its error, and composed back`, () => {
    const ids = randomIds(preset, 0x5eed0000n + BigInt(n));
    const lines = decodeByCommand(preset.name, ids.map(String));
    assert.equal(lines.length, ids.length);
    let decoded = 0;
    for (const [i, id] of ids.entries()) {
      let mine;
      try {
        mine = JSON.stringify(sf.decode(id, preset));
      } catch (error) {
        const record = JSON.parse(lines[i]);
        assert.equal(record.error, error.message, `${id} under ${preset.name}`);
        continue;
      }
      assert.equal(mine, lines[i], `${id} under ${preset.name}`);
      const d = sf.decode(id, preset);
      assert.equal(sf.compose({ timestamp: d.timestamp_ms, fields: d.fields }, preset), id, `${id} composed back`);
      decoded += 1;
    }
    // Most land inside the layout; under a layout narrower than 64 bits the
    // rest check the refusals.
    assert.ok(decoded > RANDOM_IDS / 2, `${decoded} decoded`);
    if (preset.bits < 64) assert.ok(decoded < RANDOM_IDS, `${decoded} decoded, none refused`);
  });

  test(`IDs the command composes under ${preset.name} from random IDs' parts are the package's`, () => {
    const next = random(0xc0ffeen + BigInt(n));
    for (let i = 0; i < COMPOSED_BY_THE_COMMAND; i += 1) {
      const d = sf.decode(next() & preset.maxId, preset);
      const args = ['compose', '--json', '--layout', preset.name, '--timestamp', String(d.timestamp_ms)];
      for (const [name, value] of Object.entries(d.fields)) args.push('-f', `${name}=${value}`);
      assert.equal(JSON.parse(run(args)).id, d.id);
      assert.equal(sf.compose({ timestamp: d.timestamp_ms, fields: d.fields }, preset), BigInt(d.id));
    }
  });
}

// Masking through the package against testdata/mask-vectors.json, which
// scripts/make-mask-vectors.py wrote with its own FF1 over Python's integers:
// every case masks to its masked ID and unmasks back, under its key and
// layout; a key that is not a key, a layout too narrow for FF1 and an ID
// outside the layout are refused with the masking crate's words, and no
// error shows the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sf from '../index.js';
import { MASK_CASES, thrown } from './support.mjs';

test('the vectors cover every preset, several keys and the narrowest layout', () => {
  const layouts = new Set(MASK_CASES.map((c) => c.layout));
  for (const layout of sf.layouts) assert.ok(layouts.has(layout.name), layout.name);
  assert.ok(new Set(MASK_CASES.map((c) => c.key)).size >= 3);
  assert.ok(MASK_CASES.some((c) => c.bits === sf.limits().mask_min_bits));
});

test('every vector masks to its masked ID and unmasks back', () => {
  const groups = new Map();
  for (const c of MASK_CASES) groups.set(`${c.key} ${c.layout}`, [...(groups.get(`${c.key} ${c.layout}`) || []), c]);
  let checked = 0;
  for (const cases of groups.values()) {
    const masker = new sf.Masker(cases[0].key, cases[0].layout);
    assert.equal(masker.layout.bits, cases[0].bits);
    for (const c of cases) {
      assert.equal(masker.mask(c.id), BigInt(c.masked), `${c.layout} ${c.id}`);
      assert.equal(masker.unmask(BigInt(c.masked)), BigInt(c.id), `${c.layout} ${c.masked}`);
      checked += 1;
    }
    masker.free();
    assert.throws(() => masker.mask(1n), /freed/);
  }
  assert.equal(checked, MASK_CASES.length);
  const c = MASK_CASES[0];
  assert.equal(sf.mask(c.id, c.key, c.layout), BigInt(c.masked));
  assert.equal(sf.unmask(c.masked, c.key, c.layout), BigInt(c.id));
});

test('a key is 64 hexadecimal characters, whitespace around them allowed, either case', () => {
  const c = MASK_CASES.find((x) => x.layout === 'twitter');
  assert.equal(sf.mask(c.id, `  ${c.key.toUpperCase()}\n`, 'twitter'), BigInt(c.masked));
});

test('bad keys, a narrow layout and IDs outside the layout: the crate\'s words, never the key', async () => {
  const key = MASK_CASES[0].key;
  const cases = [
    ['', 'the key is empty; a key is 64 hexadecimal characters (256 bits)'],
    [key.slice(0, 63), 'the key holds 63 characters; a key is 64 hexadecimal characters (256 bits)'],
    [`${key.slice(0, 9)}g${key.slice(10)}`, 'the key holds a character that is not hexadecimal (0-9, a-f) at position 10; a key is 64 hexadecimal characters (256 bits)'],
  ];
  for (const [text, message] of cases) {
    const error = thrown(() => new sf.Masker(text));
    assert.equal(error.field, 'key');
    assert.equal(error.kind, 'InvalidInput');
    assert.equal(error.message, message);
    assert.ok(!error.message.includes(key.slice(0, 8)));
  }
  const narrow = thrown(() => new sf.Masker(key, 'time:15,sequence:4'));
  assert.equal(narrow.field, 'layout');
  assert.match(narrow.message, /^layout time:15,sequence:4 is 19 bits wide; masking needs at least 20 bits/);
  assert.equal((thrown(() => sf.checkMaskable('time:15,sequence:4'))).message, narrow.message);
  sf.checkMaskable('time:16,sequence:4');
  const outside = thrown(() => sf.mask(1n << 53n, key, 'js53'));
  assert.equal(outside.field, 'id');
  assert.equal(outside.message, (thrown(() => sf.decode(1n << 53n, 'js53'))).message);
});

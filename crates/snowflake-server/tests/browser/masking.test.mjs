// The page's masking (assets/ff1.js, masking.js) in Node, on Node's
// WebCrypto: every case of testdata/mask-vectors.json both ways, the file
// the Rust crate and the CLI read too (its answers come from
// scripts/make-mask-vectors.py, a transcription of SP 800-38G that runs
// none of this code); Zcash's published radix-2 FF1 vectors; the key's
// rules and messages, which are the crate's; and the errors for layouts and
// IDs. page.test.mjs runs the panel in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as engine from '../../assets/engine.js';
import { Ff1, MAX_BITS, MIN_BITS, aesKey } from '../../assets/ff1.js';
import { Masker, checkWidth, parseKey } from '../../assets/masking.js';
import { idInFormat, textForms } from '../../assets/idtext.js';
import { errorMessage } from '../../assets/strings.js';
import { ROOT, savedPresetTable } from './support/data.mjs';

const { subtle } = globalThis.crypto;
const PRESETS = new engine.Presets(await savedPresetTable());
const FILE = JSON.parse(await readFile(path.join(ROOT, 'testdata/mask-vectors.json'), 'utf8'));
// What this file reads of mask-vectors.json; anything else fails the first test.
const SECTIONS = ['about', 'cases'];
const CASE_KEYS = ['key', 'layout', 'bits', 'id', 'masked'];
const KEY = '6c0f9d6b0c2b8f6a3f8e4d2a1b0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d';

const masker = (layout, key = KEY) => Masker.create(subtle, layout, parseKey(key));

test('the mask vector file holds nothing this file leaves unread', () => {
  assert.deepEqual(Object.keys(FILE), SECTIONS, 'mask-vectors.json has a section masking.test.mjs does not read');
  assert.ok(FILE.cases.length >= 300, `only ${FILE.cases.length} cases`);
  for (const c of FILE.cases) assert.deepEqual(Object.keys(c), CASE_KEYS, `a case with other fields: ${JSON.stringify(c)}`);
  // Every preset, the narrowest width, halves of unequal length, several keys.
  const layouts = new Set(FILE.cases.map((c) => c.layout));
  for (const name of PRESETS.names) assert.ok(layouts.has(name), name);
  assert.ok(FILE.cases.some((c) => c.bits === MIN_BITS));
  assert.ok(FILE.cases.some((c) => c.bits % 2 === 1));
  assert.ok(new Set(FILE.cases.map((c) => c.key)).size >= 3);
});

// One test a key and layout; each runs all of its cases, and the last test
// checks that the groups hold every case of the file.
const groups = new Map();
for (const c of FILE.cases) {
  const name = `${c.key.slice(0, 8)}… ${c.layout}`;
  if (!groups.has(name)) groups.set(name, []);
  groups.get(name).push(c);
}
let casesRun = 0;

for (const [name, cases] of groups) {
  test(`vectors: ${name}, ${cases.length} IDs masked and unmasked`, async () => {
    const layout = PRESETS.parseLayout(cases[0].layout);
    for (const c of cases) {
      assert.equal(layout.totalBits, c.bits, `${c.layout} is ${c.bits} bits wide`);
      const m = await masker(layout, c.key);
      assert.equal((await m.mask(BigInt(c.id))).toString(), c.masked, `mask ${c.id}`);
      assert.equal((await m.unmask(BigInt(c.masked))).toString(), c.id, `unmask ${c.masked}`);
      casesRun += 1;
    }
    // And as pasted text: every ID of the group at once, both ways, in base62.
    const m = await masker(layout, cases[0].key);
    const forms = (field) => cases.map((c) => textForms(BigInt(c[field])).base62).join('\n');
    const unmasked = await m.many('unmask', forms('masked'), 'base62');
    assert.deepEqual(unmasked.map((r) => [r.error, r.output.toString(), r.decoded.id.toString()]), cases.map((c) => [null, c.id, c.id]));
    const masked = await m.many('mask', `\n${forms('id')}\n\n`, 'base62');
    assert.deepEqual(masked.map((r) => [r.line, r.output.toString(), r.decoded.id.toString()]), cases.map((c, i) => [i + 2, c.masked, c.id]));
  });
}

test('every case of the vector file was run', () => {
  assert.equal(casesRun, FILE.cases.length);
});

// Zcash's test vectors for FF1-AES256 in radix 2 (zcash/librustzcash's
// zcash_primitives ff1 tests, with NIST's sample key), 88 bits given as 11
// bytes whose bits are the numeral string in little-endian bit order; the
// three with the empty tweak, which is all this FF1 takes.
const NIST_KEY = '2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94';
const ZCASH = [
  ['0000000000000000000000', '90acee3f83cde7ae5622f3'],
  ['90acee3f83cde7ae5622f3', '5b8bf120f39bab8527ea1b'],
  ['aaaaaaaaaaaaaaaaaaaaaa', 'f082b7ee8f29c07691ce64'],
];

function littleEndianBits(hex) {
  let value = 0n;
  for (const byte of Buffer.from(hex, 'hex')) {
    for (let k = 0; k < 8; k += 1) value = (value << 1n) | BigInt((byte >> k) & 1);
  }
  return value;
}

test("Zcash's published radix-2 vectors, 88 bits, both ways", async () => {
  const ff1 = new Ff1(subtle, await aesKey(subtle, Buffer.from(NIST_KEY, 'hex')), 88);
  for (const [plain, cipher] of ZCASH) {
    assert.equal(await ff1.encrypt(littleEndianBits(plain)), littleEndianBits(cipher), plain);
    assert.equal(await ff1.decrypt(littleEndianBits(cipher)), littleEndianBits(plain), cipher);
  }
});

test('FF1 takes 20 to 128 binary digits, and numbers that fit them', async () => {
  const key = await aesKey(subtle, new Uint8Array(32));
  assert.throws(() => new Ff1(subtle, key, MIN_BITS - 1), RangeError);
  assert.throws(() => new Ff1(subtle, key, MAX_BITS + 1), RangeError);
  const ff1 = new Ff1(subtle, key, MIN_BITS);
  await assert.rejects(ff1.encrypt(1n << 20n), RangeError);
  await assert.rejects(ff1.decrypt(-1n), RangeError);
  await assert.rejects(aesKey(subtle, new Uint8Array(16)), RangeError);
});

test('round trips at every width from 20 to 64 bits stay in the width', async () => {
  let seed = 0x2545f4914f6cdd1dn;
  const next = () => {
    // xorshift64: reproducible values over all 64 bits.
    seed ^= BigInt.asUintN(64, seed << 13n);
    seed ^= seed >> 7n;
    seed ^= BigInt.asUintN(64, seed << 17n);
    return seed;
  };
  for (let bits = MIN_BITS; bits <= 64; bits += 1) {
    const layout = engine.parseSpec(`time:${bits - 4},sequence:4`);
    const m = await masker(layout);
    const top = (1n << BigInt(bits)) - 1n;
    for (const id of [0n, top, ...Array.from({ length: 8 }, () => next() & top)]) {
      const masked = await m.mask(id);
      assert.ok(masked >= 0n && masked <= top, `${bits} bits: ${id} masks to ${masked}`);
      assert.equal(await m.unmask(masked), id, `${bits} bits: ${id}`);
    }
  }
});

test('two keys give unrelated answers', async () => {
  const twitter = PRESETS.get('twitter');
  const a = await masker(twitter);
  const b = await masker(twitter, KEY.replace(/^6/, '7'));
  for (const id of [0n, 1n, 1541815603606036480n]) assert.notEqual(await a.mask(id), await b.mask(id));
});

// The crate's own cases (crates/snowflake-mask/src/key.rs), in its words
// with the first letter raised, as the page writes a sentence.
const HEX = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const KEY_CASES = [
  ['', 'the key is empty'],
  ['  \n\t', 'the key is empty'],
  [HEX.slice(0, 63), 'the key holds 63 characters'],
  [`${HEX}0`, 'the key holds 65 characters'],
  [`${HEX} ${HEX}`, 'the key holds 129 characters'],
  [`g${HEX.slice(1)}`, 'the key holds a character that is not hexadecimal (0-9, a-f) at position 1'],
  [`${HEX.slice(0, 62)}-f`, 'the key holds a character that is not hexadecimal (0-9, a-f) at position 63'],
  [`${HEX.slice(0, 62)}é`, 'the key holds 63 characters'],
  [`${HEX.slice(0, 63)}é`, 'the key holds a character that is not hexadecimal (0-9, a-f) at position 64'],
  [`${HEX.slice(0, 63)}+`, 'the key holds a character that is not hexadecimal (0-9, a-f) at position 64'],
  // A space inside is a character; only ASCII whitespace around the key goes, as Rust's trim_ascii.
  [`${HEX.slice(0, 32)} ${HEX.slice(33)}`, 'the key holds a character that is not hexadecimal (0-9, a-f) at position 33'],
  [`\u00a0${HEX}`, 'the key holds 65 characters'],
];

test("bad keys are described as the crate describes them, and never shown", () => {
  for (const [text, start] of KEY_CASES) {
    let caught;
    try {
      parseKey(text);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof engine.EngineError, JSON.stringify(text));
    const en = errorMessage('en', caught);
    assert.equal(en, `${start.charAt(0).toUpperCase()}${start.slice(1)}; a key is 64 hexadecimal characters (256 bits)`);
    const de = errorMessage('de', caught);
    assert.match(de, /; ein Schlüssel besteht aus 64 Hexadezimalzeichen \(256 Bit\)$/);
    for (const said of [en, de, caught.message, caught.value, JSON.stringify(caught.vars)]) {
      assert.ok(!said.includes(HEX.slice(0, 8)) && !said.includes(HEX.slice(-8)), `${said} shows the key`);
    }
  }
  // Either case, and ASCII whitespace around it.
  assert.deepEqual(parseKey(` \t${HEX.toUpperCase()}\r\n`), Uint8Array.from({ length: 32 }, (_, i) => i));
});

test('the key bytes are wiped once WebCrypto holds them', async () => {
  const bytes = parseKey(KEY);
  assert.notDeepEqual(bytes, new Uint8Array(32));
  await Masker.create(subtle, PRESETS.get('twitter'), bytes);
  assert.deepEqual(bytes, new Uint8Array(32));
  // And when the layout is refused.
  const refused = parseKey(KEY);
  await assert.rejects(Masker.create(subtle, engine.parseSpec('time:15,sequence:4'), refused), { code: 'mask.tooNarrow' });
  assert.deepEqual(refused, new Uint8Array(32));
});

test('a layout narrower than 20 bits is refused, in the crate\'s words', () => {
  const narrow = engine.parseSpec('time:15,sequence:4');
  let caught;
  try {
    checkWidth(narrow);
  } catch (error) {
    caught = error;
  }
  assert.equal(caught.field, 'layout');
  // crates/snowflake-mask/src/masker.rs, the_narrowest_width_is_twenty_bits.
  assert.equal(
    errorMessage('en', caught),
    'Layout time:15,sequence:4 is 19 bits wide; masking needs at least 20 bits, because FF1 is approved only for domains of a million values or more (NIST SP 800-38G Rev. 1)',
  );
  assert.match(errorMessage('de', caught), /^Layout time:15,sequence:4 ist 19 Bit breit; Maskieren braucht mindestens 20 Bit/);
  checkWidth(engine.parseSpec('time:16,sequence:4'));
});

test('an ID beyond the layout, or no ID at all, is its line\'s error and the rest go on', async () => {
  const js53 = await masker(PRESETS.get('js53'));
  const twitter = await masker(PRESETS.get('twitter'));
  await assert.rejects(js53.unmask(1n << 53n), { code: 'id.tooWide', field: 'id' });
  await assert.rejects(twitter.mask(1n << 63n), { code: 'id.signBit' });
  const rows = await js53.many('unmask', `5\n${1n << 53n}\nnope\n0x10\n${(1n << 64n) + 1n}`);
  assert.deepEqual(
    rows.map((r) => [r.line, r.error?.code ?? 'ok']),
    [[1, 'ok'], [2, 'id.tooWide'], [3, 'id.notDecimal'], [4, 'ok'], [5, 'id.tooBig']],
  );
  assert.equal(
    errorMessage('en', rows[1].error),
    'ID 9007199254740992 does not fit the layout js53: its IDs are 0 to 9,007,199,254,740,991',
  );
  assert.equal(rows[3].output, await js53.unmask(16n));
  await assert.rejects(js53.many('unmask', Array.from({ length: 10001 }, (_, i) => String(i)).join('\n')), { code: 'bulk.tooMany' });
});

test('answers are written in the form the IDs were read in, decimal for auto', () => {
  const id = 4194439168n;
  assert.equal(idInFormat(id, 'auto'), '4194439168');
  for (const format of ['base32', 'base62', 'base58']) assert.equal(idInFormat(id, format), textForms(id)[format]);
});

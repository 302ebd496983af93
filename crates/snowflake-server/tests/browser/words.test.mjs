// The page's words against the page's model (the core compiled to
// WebAssembly, through the npm package that ships the same module): every
// preset, text form and breakdown form the core lists has its words in
// English and German, and the two languages have the same keys. The page
// reads its lists from the module, so a preset or form the core gains
// shows up on the page by itself, named as the core names it; this test
// fails until it has its words too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as en from '../../assets/lang-en.js';
import * as de from '../../assets/lang-de.js';
import { snowflake } from './support/data.mjs';

const LANGS = { en, de };

test('German has every English word and the same messages', () => {
  for (const key of Object.keys(en.WORDS)) assert.ok(key in de.WORDS, key);
  assert.deepEqual(Object.keys(de.MESSAGES).sort(), Object.keys(en.MESSAGES).sort());
});

for (const [lang, { WORDS }] of Object.entries(LANGS)) {
  test(`${lang}: every preset's platform, every text form and every form of the breakdown has its words`, () => {
    for (const layout of snowflake.layouts) assert.ok(`platform.${layout.name}` in WORDS, `platform.${layout.name}`);
    for (const form of snowflake.forms) assert.ok(`form.${form}` in WORDS, `form.${form}`);
    for (const form of snowflake.limits().breakdown_forms) assert.ok(`result.${form}` in WORDS, `result.${form}`);
    for (const verdict of ['possible', 'implausible', 'impossible']) assert.ok(`verdict.${verdict}` in WORDS, verdict);
  });
}

// The package knows every preset and text form the core lists: its types
// (index.d.ts) name each, and its README's list of presets names each. A
// preset or form added to the core fails here until the package says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as sf from '../index.js';
import { PACKAGE } from './support.mjs';

const TYPES = readFileSync(path.join(PACKAGE, 'index.d.ts'), 'utf8');
const README = readFileSync(path.join(PACKAGE, 'README.md'), 'utf8');

// The names a string-literal union type of index.d.ts lists.
function union(name) {
  const found = new RegExp(`export type ${name} = ([^;]+);`).exec(TYPES);
  assert.ok(found, `index.d.ts declares ${name}`);
  return [...found[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
}

test('the types name every preset, in the core\'s order', () => {
  assert.deepEqual(union('PresetName'), sf.layouts.map((l) => l.name));
});

test('the types name every text form, in the core\'s order', () => {
  assert.deepEqual(union('TextFormName'), [...sf.forms]);
  assert.deepEqual([...sf.forms], sf.limits().text_forms.map((f) => f.name));
});

test('the README names every preset and every text form', () => {
  for (const layout of sf.layouts) assert.ok(README.includes(`\`${layout.name}\``), layout.name);
  for (const form of sf.forms) assert.ok(README.includes(`\`${form}\``), form);
});

test('every export the types declare is exported, and nothing else', () => {
  const declared = [...TYPES.matchAll(/^export (?:declare )?(?:const|function|class) (\w+)/gm)].map((m) => m[1]);
  assert.deepEqual([...new Set(declared)].sort(), Object.keys(sf).sort());
});

test('the README\'s first example gives what its comments say', async () => {
  const block = /```js\n([\s\S]*?)```/.exec(README)[1];
  const lines = block.split('\n').filter((line) => line.includes('// '));
  assert.ok(lines.length >= 2);
  for (const line of lines) {
    const [code, said] = line.split(/;\s*\/\/ /);
    // The package's names in scope, as the example's import brings them.
    const value = new Function(...Object.keys(sf), `return (${code});`)(...Object.values(sf));
    assert.equal(typeof value === 'bigint' ? `${value}n` : `'${value}'`, said.trim(), code);
  }
});

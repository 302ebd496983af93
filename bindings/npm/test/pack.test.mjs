// The package as a user gets it: `npm pack` makes a tarball of exactly its
// files, which installs into a fresh folder with no registry (it has no
// dependencies) and imports there, types and module included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE } from './support.mjs';

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('npm pack makes a tarball that installs and imports in a fresh folder', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snowflake-toolkit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], PACKAGE));
  const manifest = JSON.parse(readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
  assert.deepEqual(packed.files.map((f) => f.path).sort(), [...manifest.files, 'package.json'].sort());
  const wasm = readFileSync(path.join(PACKAGE, 'snowflake.wasm'));
  assert.equal(packed.files.find((f) => f.path === 'snowflake.wasm').size, wasm.length);

  const app = path.join(dir, 'app');
  execFileSync('mkdir', [app]);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  npm(['install', '--no-audit', '--no-fund', '--offline', path.join(dir, packed.filename)], app);
  writeFileSync(
    path.join(app, 'main.js'),
    [
      "import { decode, compose, layouts, forms, Generator } from 'snowflake-toolkit';",
      "const d = decode('1541815603606036480');",
      "const id = compose({ timestamp: 1462015105796, fields: { worker: 1 } }, 'discord');",
      'const g = new Generator();',
      'console.log(JSON.stringify({ time: d.time, id: String(id), layouts: layouts.length, forms, next: g.next() > 0n }));',
    ].join('\n'),
  );
  const out = JSON.parse(execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' }));
  assert.deepEqual(out, { time: '2022-06-28T16:07:40.105Z', id: '175928847299117056', layouts: 6, forms: ['decimal', 'hex', 'base32', 'base62', 'base58'], next: true });
  const installed = path.join(app, 'node_modules/snowflake-toolkit');
  assert.deepEqual(readFileSync(path.join(installed, 'snowflake.wasm')), wasm);
  assert.match(readFileSync(path.join(installed, 'index.d.ts'), 'utf8'), /export function decode/);
});

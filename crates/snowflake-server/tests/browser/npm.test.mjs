// The npm package in a browser, as a bundler-free page imports it: index.js
// fetches snowflake.wasm beside it over HTTP (the path Node never takes,
// which reads the file), and the package then answers in Chromium as it does
// in Node. A page's main thread may not block, so the generator's short
// waits run as a loop there: 10,000 IDs, more than a millisecond's 4,096,
// come strictly increasing through it. A module that cannot be fetched
// fails the import with the address and the status.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT } from './support/data.mjs';
import * as sf from '../../../../bindings/npm/index.js';

const PACKAGE = path.join(ROOT, 'bindings', 'npm');
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

// What the page runs and hands back as JSON: each answer as text, BigInts
// written in decimal, so that Node's answers to the same calls compare.
const CALLS = `
  const KEY = '000102030405060708090a0b0c0d0e0f'.repeat(2);
  const answers = {
    decoded: JSON.stringify(sf.decode(1541815603606036480n)),
    composed: String(sf.compose({ timestamp: '2010-11-04T01:42:55.657Z', fields: { datacenter: 1, machine: 1 } })),
    layouts: sf.layouts.map((l) => l.name).join(),
    base58: sf.toText(1541815603606036480n, 'base58'),
    masked: String(sf.mask(1541815603606036480n, KEY)),
    unmasked: String(sf.unmask(sf.mask(1541815603606036480n, KEY), KEY)),
    bounds: JSON.stringify(sf.bounds('2024-01-31T00:00:00Z', '2024-01-31T23:59:59.999Z', 'discord')),
    error: (() => { try { sf.compose({ fields: { machine: 32 } }); return 'no error'; } catch (e) { return e.field + ': ' + e.message; } })(),
  };
  const generator = new sf.Generator('twitter', { node: { datacenter: 2, machine: 7 } });
  const ids = Array.from({ length: 10000 }, () => generator.next());
  answers.increasing = ids.every((id, i) => i === 0 || id > ids[i - 1]);
  answers.node = sf.decode(ids[9999]).fields.machine + '/' + sf.decode(ids[9999]).fields.datacenter;
`;

// The same calls in Node, through the same files.
function nodeAnswers() {
  return new Function('sf', `${CALLS} return answers;`)(sf);
}

let server;
let base;
let browser;
let withoutModule = false;

before(async () => {
  server = createServer(async (request, response) => {
    const name = new URL(request.url, 'http://x').pathname.slice(1);
    if (name === 'page.html') {
      response.writeHead(200, { 'content-type': TYPES['.html'] });
      response.end(`<!doctype html><title>npm</title><script type="module">
        window.answers = import('./index.js').then((sf) => { ${CALLS} return answers; }, (e) => ({ failed: e.message }));
      </script>`);
      return;
    }
    const known = ['index.js', 'snowflake.js', 'snowflake.wasm'];
    if (!known.includes(name) || (withoutModule && name === 'snowflake.wasm')) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[path.extname(name)] });
    response.end(await readFile(path.join(PACKAGE, name)));
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  await new Promise((done) => server?.close(done));
});

async function pageAnswers() {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${base}/page.html`);
    const answers = await page.evaluate(() => window.answers);
    return { answers, errors };
  } finally {
    await context.close();
  }
}

test('the package fetches its module over HTTP in Chromium and answers as it does in Node', { timeout: 120_000 }, async () => {
  withoutModule = false;
  const { answers, errors } = await pageAnswers();
  assert.deepEqual(errors, []);
  assert.equal(answers.failed, undefined, `the import failed: ${answers.failed}`);
  const want = nodeAnswers();
  for (const key of ['decoded', 'composed', 'layouts', 'base58', 'masked', 'unmasked', 'bounds', 'error', 'node']) {
    assert.equal(answers[key], want[key], key);
  }
  assert.equal(answers.unmasked, '1541815603606036480');
  assert.equal(answers.composed, '4194439168');
  assert.match(answers.error, /^machine: machine 32 is out of range: 0 to 31/);
  assert.equal(answers.node, '7/2');
  assert.equal(answers.increasing, true, 'IDs strictly increasing on the main thread');
});

test('a module the server does not have fails the import with its address and status', { timeout: 120_000 }, async () => {
  withoutModule = true;
  const { answers } = await pageAnswers();
  assert.equal(answers.failed, `snowflake-toolkit: ${base}/snowflake.wasm answered 404`);
});

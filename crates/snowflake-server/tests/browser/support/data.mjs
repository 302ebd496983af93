// What the tests read besides the page: the shared vectors, and the page's
// own model, the core compiled to WebAssembly, through the npm package that
// ships the same module and glue (bindings/npm): the presets, the text
// forms and the words of each error, as the page gets them.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as snowflake from '../../../../../bindings/npm/index.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../../../../..');

export const VECTORS = JSON.parse(await readFile(path.join(ROOT, 'testdata/vectors.json'), 'utf8'));

export { snowflake };

// The package's own test helpers, which read the vectors as these tests do:
// its seeded 64-bit generator and what an error vector asks of the module.
export { attemptVector, random } from '../../../../../bindings/npm/test/support.mjs';

/** The core's presets, in its order, as the core describes them (with each platform). */
export const PRESET_TABLE = {
  future_slack_ms: snowflake.limits().future_slack_ms,
  presets: snowflake.layouts.map((layout) => layout.json),
};

/** The saved page's path (`snowflake page > file`), which scripts/browser-test writes. */
export function savedPagePath() {
  const saved = process.env.SNOWFLAKE_PAGE || '';
  if (!saved) throw new Error('SNOWFLAKE_PAGE is not set: run scripts/browser-test, or point it at `snowflake page > page.html`');
  return saved;
}

/** The words of the core's error that `fn` throws: what the page must show for the same input. */
export function errorOf(fn) {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof snowflake.SnowflakeError)) throw error;
    return error;
  }
  throw new Error(`${fn} threw nothing`);
}

// What the tests read besides the page: the shared vectors, and the core's
// table of presets as the saved page carries it (its JSON data block), which
// the engine is built from here just as the page builds it.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../../../../..');

export const VECTORS = JSON.parse(await readFile(path.join(ROOT, 'testdata/vectors.json'), 'utf8'));

/** The saved page's path (`snowflake page > file`), which scripts/browser-test writes. */
export function savedPagePath() {
  const saved = process.env.SNOWFLAKE_PAGE || '';
  if (!saved) throw new Error('SNOWFLAKE_PAGE is not set: run scripts/browser-test, or point it at `snowflake page > page.html`');
  return saved;
}

const OPEN = '<script type="application/json" id="presets">';

/** The presets data block of a page's HTML, parsed. */
export function presetTableOf(html) {
  const start = html.indexOf(OPEN);
  if (start < 0) throw new Error('the page has no presets data block');
  const end = html.indexOf('</script>', start);
  return JSON.parse(html.slice(start + OPEN.length, end));
}

/** The presets data block of the saved page. */
export async function savedPresetTable() {
  return presetTableOf(await readFile(savedPagePath(), 'utf8'));
}

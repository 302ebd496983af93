// snowflake-toolkit: the snowflake core, compiled to WebAssembly, for Node 20+
// and browsers. This file loads the module next to it (snowflake.wasm) and
// hands out snowflake.js, which calls it; see README.md.
import { init, presets, textForms } from './snowflake.js';

async function moduleBytes() {
  const url = new URL('./snowflake.wasm', import.meta.url);
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`snowflake-toolkit: ${url} answered ${response.status}`);
  return response.arrayBuffer();
}

await init(await moduleBytes());

/** The core's presets, in its order: twitter, discord, … */
export const layouts = Object.freeze(presets());

/** The text forms' names, in the core's order: decimal, hex, base32, base62, base58. */
export const forms = Object.freeze(textForms());

export {
  Decoded,
  Generator,
  Layout,
  Masker,
  SnowflakeError,
  bounds,
  checkMaskable,
  compose,
  decode,
  formatTime,
  fromText,
  limits,
  mask,
  parseLayout,
  parseTime,
  parseValue,
  readings,
  timeUnits,
  toText,
  unmask,
} from './snowflake.js';

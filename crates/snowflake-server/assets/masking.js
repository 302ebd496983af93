// Masking in the browser, as `snowflake mask` and `unmask` do it: the key
// as pasted, FF1 (ff1.js) over a layout's bits, and many IDs at once. No
// DOM: the panel (unmask.js) passes the key's text in and gets rows back.
//
// The key's rules and words are those of the Rust crate snowflake-mask, so
// that a key file's text is judged alike here and there: 64 hexadecimal
// characters, ASCII whitespace around them allowed; an error gives the
// length or the position of a bad character, never a character of the key.
import { EngineError, decode, layoutName } from './engine.js';
import { readIds } from './many.js';
import { Ff1, KEY_BYTES, MIN_BITS, aesKey } from './ff1.js';

/** The key written out: two hexadecimal characters a byte. */
export const KEY_HEX_LEN = KEY_BYTES * 2;
const KEY_BITS = KEY_BYTES * 8;
// What Rust's trim_ascii takes away: space, tab, line feed, form feed, carriage return.
const ASCII_SPACE_AROUND = /^[ \t\n\f\r]+|[ \t\n\f\r]+$/g;
const HEX_DIGIT = /^[0-9a-fA-F]$/;

/** The two ways an ID can go; `unmask` gives back what `mask` hid. */
export const WAYS = ['unmask', 'mask'];

/**
 * The key's 32 bytes from its text, or an EngineError for the field `key`
 * whose value is a count or a position, never the text.
 */
export function parseKey(text) {
  const trimmed = String(text).replace(ASCII_SPACE_AROUND, '');
  const size = { hexLen: KEY_HEX_LEN, bits: KEY_BITS };
  if (trimmed === '') throw new EngineError('key.empty', 'key', '', size);
  // Counted in characters, as the crate counts them, so that a look-alike
  // pasted from elsewhere gives the length and position the reader sees.
  const chars = [...trimmed];
  if (chars.length !== KEY_HEX_LEN) throw new EngineError('key.length', 'key', String(chars.length), size);
  const at = chars.findIndex((c) => !HEX_DIGIT.test(c));
  if (at >= 0) throw new EngineError('key.notHex', 'key', String(at + 1), size);
  const bytes = new Uint8Array(KEY_BYTES);
  for (let i = 0; i < KEY_BYTES; i += 1) bytes[i] = Number.parseInt(trimmed.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Refuses a layout narrower than FF1 allows, as Masker::new does. */
export function checkWidth(layout) {
  if (layout.totalBits < MIN_BITS) {
    throw new EngineError('mask.tooNarrow', 'layout', layoutName(layout), { bits: layout.totalBits, min: MIN_BITS });
  }
}

/** WebCrypto's SubtleCrypto, or null where the browser withholds it: outside a secure context. */
export function webCrypto() {
  return globalThis.crypto?.subtle ?? null;
}

/** A keyed permutation of one layout's IDs; make one with Masker.create. */
export class Masker {
  constructor(layout, ff1) {
    this.layout = layout;
    this.ff1 = ff1;
  }

  /**
   * A masker for `layout` under the key `keyBytes` (from parseKey), which is
   * wiped once WebCrypto holds it.
   */
  static async create(subtle, layout, keyBytes) {
    try {
      checkWidth(layout);
      return new Masker(layout, new Ff1(subtle, await aesKey(subtle, keyBytes), layout.totalBits));
    } finally {
      keyBytes.fill(0);
    }
  }

  /** The masked form of an ID of the layout; an ID outside it is decode's error. */
  async mask(id) {
    decode(this.layout, id);
    return this.ff1.encrypt(BigInt(id));
  }

  /** The ID a masked ID hides; any ID of the layout unmasks to some ID of it. */
  async unmask(masked) {
    decode(this.layout, masked);
    return this.ff1.decrypt(BigInt(masked));
  }

  /**
   * Pasted IDs, one a line, masked or unmasked (`way`): a row for each line
   * that is not blank, `{ line, input, id, output, decoded, error }`, where
   * `id` is the ID read from the line, `output` the ID it became and `decoded` the breakdown of the
   * plain one of the two (the output when unmasking, the input when
   * masking). A bad line gets its error and the rest go on.
   */
  async many(way, text, format = 'auto') {
    const rows = readIds(text, format).map((row) => ({ ...row, output: null, decoded: null }));
    // Every ID at once: WebCrypto works the calls off in parallel.
    await Promise.all(
      rows.map(async (row) => {
        if (row.error) return;
        try {
          row.output = await (way === 'mask' ? this.mask(row.id) : this.unmask(row.id));
          row.decoded = decode(this.layout, way === 'mask' ? row.id : row.output);
        } catch (error) {
          if (!(error instanceof EngineError)) throw error;
          row.error = error;
        }
      }),
    );
    return rows;
  }
}

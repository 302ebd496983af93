// An ID as text: the text forms the core writes (0x hexadecimal, Crockford
// base32, base62, base58) and the one ID parser, with the same rules and
// errors as crates/snowflake/src/text.rs and Id::parse.
import { EngineError, LIMITS } from './engine.js';

const ZERO = 0n;
const { U64_MAX } = LIMITS;

/** The forms an ID can be typed in; `auto` is decimal or 0x hexadecimal. */
export const ID_FORMATS = ['auto', 'base32', 'base62', 'base58'];

const HEX_DIGITS = '0123456789abcdef';
const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function toDigits(id, alphabet, width = 0) {
  const base = BigInt(alphabet.length);
  let n = BigInt(id);
  let out = '';
  do {
    out = alphabet[Number(n % base)] + out;
    n /= base;
  } while (n > ZERO);
  return out.padStart(width, alphabet[0]);
}

/**
 * The text forms of an ID: `0x` hexadecimal; Crockford base32, 13 upper-case
 * characters; base62 (0-9A-Za-z), 11 characters; base58 (Bitcoin's alphabet).
 * The fixed widths make text order equal number order for base32 and base62.
 */
export function textForms(id) {
  return {
    hex: `0x${BigInt(id).toString(16)}`,
    base32: toDigits(id, B32, 13),
    base62: toDigits(id, B62, 11),
    base58: toDigits(id, B58),
  };
}

/** An ID written in one of ID_FORMATS, as the CLI writes what it read: `auto` is decimal. */
export function idInFormat(id, format) {
  return format === 'auto' ? BigInt(id).toString() : textForms(id)[format];
}

function fromDigits(text, alphabet, code, maxLength) {
  if (text === '') throw new EngineError('id.empty', 'id', text);
  if (maxLength && text.length > maxLength) throw new EngineError('id.tooBig', 'id', text);
  const base = BigInt(alphabet.length);
  let n = ZERO;
  for (const c of text) {
    const digit = alphabet.indexOf(c);
    if (digit < 0) throw new EngineError(code, 'id', text);
    n = n * base + BigInt(digit);
    if (n > U64_MAX) throw new EngineError('id.tooBig', 'id', text);
  }
  return n;
}

/**
 * The one ID parser. `auto` reads decimal or `0x` hexadecimal exactly as the
 * core's Id::parse does; the other forms are asked for by name, never guessed,
 * because "10" is a valid ID in every one of them.
 */
export function parseId(input, format = 'auto') {
  const text = String(input);
  if (format === 'base32') {
    // Crockford: any case; I and L read as 1, O as 0.
    const canonical = text.toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0');
    return fromDigits(canonical, B32, 'id.notBase32', 13);
  }
  if (format === 'base62') return fromDigits(text, B62, 'id.notBase62', 11);
  if (format === 'base58') return fromDigits(text, B58, 'id.notBase58', 0);
  let digits = text;
  let radix = 10n;
  if (text.startsWith('0x') || text.startsWith('0X')) {
    digits = text.slice(2);
    radix = 16n;
  }
  if (digits === '') throw new EngineError('id.empty', 'id', text);
  if (text.startsWith('-')) throw new EngineError('id.negative', 'id', text);
  let value = ZERO;
  for (const c of digits) {
    const d = radix === 16n ? HEX_DIGITS.indexOf(c.toLowerCase()) : '0123456789'.indexOf(c);
    if (d < 0 || c === '') throw new EngineError(radix === 16n ? 'id.notHex' : 'id.notDecimal', 'id', text);
    value = value * radix + BigInt(d);
    if (value > U64_MAX) throw new EngineError('id.tooBig', 'id', text);
  }
  return value;
}

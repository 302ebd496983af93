// The engine: what the Rust core (crates/snowflake) does, in the browser.
// Layouts (presets and custom specs), compose, decode, bounds, text forms and
// decoding under every preset. No DOM, no clock, no language: the view passes
// "now" in, and turns an EngineError into words with strings.js.
//
// Every ID, timestamp, epoch and tick is a BigInt. An ID passes 2^53, where a
// JavaScript Number silently rounds, so no Number ever holds one. The rules
// and their order follow the core's, so that the same mistake gets the same
// field and value here and there (testdata/vectors.json checks both).

const ZERO = 0n;
const ONE = 1n;
const U64_MAX = (ONE << 64n) - ONE;
const I64_MAX = (ONE << 63n) - ONE;
const JS_SAFE_MAX = (ONE << 53n) - ONE;

// The name the time field goes by in breakdowns, and its reserved spellings.
export const TIME_FIELD = 'timestamp';
export const SIGN_FIELD = 'sign';
// The top bits of a layout narrower than 63 bits, always zero.
export const UNUSED_FIELD = 'unused';
export const SEQUENCE_FIELD = 'sequence';
export const ID_FORMATS = ['auto', 'base32', 'base62', 'base58'];

// A mistake in the input: `code` says which (strings.js words it), `field` is
// the input at fault as the core's Error::field() names it, `value` the text
// at fault, `vars` whatever else the message needs.
export class EngineError extends Error {
  constructor(code, field, value, vars = {}) {
    super(`${code}: ${field} ${value}`);
    this.name = 'EngineError';
    this.code = code;
    this.field = field;
    this.value = String(value);
    this.vars = vars;
  }
}

const maxOf = (bits) => (ONE << BigInt(bits)) - ONE;

// The presets, as the core defines them, with the platform each belongs to
// and when it began issuing IDs: a decoded time before that, or in the future,
// is implausible for that platform.
const PRESET_DEFS = [
  { name: 'twitter', epoch: 1288834974657n, tick: 1n, time: 41, fields: [['datacenter', 5], ['machine', 5], ['sequence', 12]], sequence: 'sequence', since: 1288834974657n },
  { name: 'discord', epoch: 1420070400000n, tick: 1n, time: 42, fields: [['worker', 5], ['process', 5], ['increment', 12]], sequence: 'increment', since: 1431475200000n },
  { name: 'instagram', epoch: 1314220021721n, tick: 1n, time: 41, fields: [['shard', 13], ['sequence', 10]], sequence: 'sequence', since: 1314220021721n },
  { name: 'sonyflake', epoch: 1409529600000n, tick: 10n, time: 39, fields: [['sequence', 8], ['machine', 16]], sequence: 'sequence', since: 1409529600000n },
  { name: 'mastodon', epoch: 0n, tick: 1n, time: 48, fields: [['sequence', 16]], sequence: 'sequence', since: 1475625600000n },
  { name: 'js53', epoch: 1704067200000n, tick: 1n, time: 41, fields: [['worker', 6], ['sequence', 6]], sequence: 'sequence', since: 1704067200000n },
];

export const PRESETS = PRESET_DEFS.map((def) => def.name);

// ---- layouts ----------------------------------------------------------------

function validateName(name) {
  const ok = name.length >= 1 && name.length <= 32 && /^[a-z][a-z0-9_]*$/.test(name);
  if (!ok) throw new EngineError('layout.badName', 'layout', name);
  if (name === TIME_FIELD || name === 'time' || name === SIGN_FIELD) {
    throw new EngineError('layout.reserved', 'layout', name);
  }
}

// Builds and checks a layout, as LayoutBuilder::build does: the time width,
// each field's name, width and uniqueness, the total, then epoch and tick.
function build({ name = null, epoch = ZERO, tick = ONE, time, fields, sequence = null, since = null }) {
  if (!(time >= 1 && time <= 62)) throw new EngineError('layout.timeBits', 'layout', String(time));
  let total = time;
  fields.forEach(([fieldName, bits], i) => {
    validateName(fieldName);
    if (bits === 0) throw new EngineError('layout.badWidth', 'layout', '0', { name: fieldName });
    if (fields.slice(0, i).some(([other]) => other === fieldName)) {
      throw new EngineError('layout.duplicate', 'layout', fieldName);
    }
    total += bits;
  });
  // Narrower layouts keep their top bits zero, so their IDs stay small.
  if (total > 64) throw new EngineError('layout.total', 'layout', String(total));
  const timeShift = total - time;
  let shift = timeShift;
  const built = fields.map(([fieldName, bits]) => {
    shift -= bits;
    return Object.freeze({ name: fieldName, bits, shift, max: maxOf(bits) });
  });
  const layout = {
    name,
    timeBits: time,
    timeShift,
    totalBits: total,
    fields: Object.freeze(built),
    sequence,
    since,
    epochMs: ZERO,
    tickMs: ONE,
  };
  return withTick(withEpoch(layout, epoch), tick);
}

function checkTimeRange(layout, field, value) {
  const end = layout.epochMs + (maxOf(layout.timeBits) + ONE) * layout.tickMs;
  if (end > I64_MAX) {
    throw new EngineError(field === 'epoch' ? 'epoch.tooLate' : 'tick.tooLong', field, String(value));
  }
}

// Derived facts, computed once: the largest ID, the last millisecond.
function finish(layout) {
  const maxUnits = maxOf(layout.timeBits);
  const seq = layout.fields.find((f) => f.name === layout.sequence) || null;
  const nodes = layout.fields.filter((f) => f !== seq).reduce((n, f) => n * (ONE << BigInt(f.bits)), ONE);
  return Object.freeze({
    ...layout,
    spec: specOf(layout),
    signBit: layout.totalBits === 63,
    maxId: maxOf(layout.totalBits),
    maxUnits,
    lastMs: layout.epochMs + maxUnits * layout.tickMs + layout.tickMs - ONE,
    idsPerTick: seq ? seq.max + ONE : null,
    nodes,
    jsSafe: maxOf(layout.totalBits) <= JS_SAFE_MAX,
  });
}

function specOf(layout) {
  return [`time:${layout.timeBits}`, ...layout.fields.map((f) => `${f.name}:${f.bits}`)].join(',');
}

/** This layout with another epoch (Unix ms, a BigInt). */
export function withEpoch(layout, epochMs) {
  const next = { ...layout, epochMs: BigInt(epochMs) };
  checkTimeRange(next, 'epoch', epochMs);
  return finish(next);
}

/** This layout with another tick (ms per time unit, at least 1). */
export function withTick(layout, tickMs) {
  const tick = BigInt(tickMs);
  if (tick < ONE) throw new EngineError('tick.zero', 'tick_ms', String(tickMs));
  const next = { ...layout, tickMs: tick };
  checkTimeRange(next, 'tick_ms', tickMs);
  return finish(next);
}

/** The layout's display name: the preset's, or the spec written out. */
export function layoutName(layout) {
  return layout.name ?? layout.spec;
}

/** A preset by name, ASCII case ignored; null when there is none. */
export function preset(name) {
  const def = PRESET_DEFS.find((d) => d.name === String(name).toLowerCase());
  return def ? build(def) : null;
}

/** Every preset, in the core's order. */
export function presets() {
  return PRESET_DEFS.map(build);
}

/**
 * The one layout parser: a preset name, or fields most significant first,
 * `time:41,datacenter:5,machine:5,sequence:12`. The field named `sequence`
 * is the sequence.
 */
export function parseLayout(input) {
  const found = preset(input);
  if (found) return found;
  if (!input.includes(':')) throw new EngineError('layout.unknown', 'layout', input);
  let time = 0;
  const fields = [];
  let sequence = null;
  input.split(',').forEach((raw, i) => {
    const part = raw.trim();
    const colon = part.indexOf(':');
    if (colon < 0) throw new EngineError('layout.notNameBits', 'layout', part);
    const name = part.slice(0, colon).trim();
    const bitsText = part.slice(colon + 1).trim();
    // Rust's u8 parser: optional '+', digits, at most 255.
    const bits = /^\+?[0-9]+$/.test(bitsText) ? Number(bitsText.replace('+', '')) : NaN;
    if (!(bits >= 1 && bits <= 64)) throw new EngineError('layout.badWidth', 'layout', bitsText, { name });
    const isTime = name === 'time' || name === TIME_FIELD;
    if (i === 0) {
      if (!isTime) throw new EngineError('layout.firstNotTime', 'layout', name);
      time = bits;
    } else if (isTime) {
      throw new EngineError('layout.timeTwice', 'layout', 'time');
    } else {
      if (name === SEQUENCE_FIELD) sequence = name;
      fields.push([name, bits]);
    }
  });
  return build({ time, fields, sequence });
}

// ---- time -------------------------------------------------------------------

/** Time units since the epoch for a Unix-ms timestamp, floored to the tick. */
export function timeUnits(layout, timestampMs) {
  const ts = BigInt(timestampMs);
  if (ts < layout.epochMs) {
    throw new EngineError('timestamp.beforeEpoch', 'timestamp', ts.toString(), { epoch: layout.epochMs });
  }
  if (ts > layout.lastMs) {
    throw new EngineError('timestamp.afterEnd', 'timestamp', ts.toString(), { last: layout.lastMs });
  }
  return (ts - layout.epochMs) / layout.tickMs;
}

/** The Unix ms at which a number of time units begins. */
export function timestampOf(layout, units) {
  const u = units > layout.maxUnits ? layout.maxUnits : units;
  return layout.epochMs + u * layout.tickMs;
}

const MS_PER_DAY = 86400000n;
const floorDiv = (a, b) => (a >= ZERO ? a / b : -((-a + b - ONE) / b));
const pad = (n, width) => n.toString().padStart(width, '0');

/**
 * A Unix-ms BigInt as the core's UnixMillis prints it: RFC 3339 in UTC with
 * milliseconds, and ISO 8601's expanded year outside 0 to 9999. Exact over the
 * whole i64 range, where Date gives up at ±8.64e15 ms.
 */
export function isoOf(ms) {
  const t = BigInt(ms);
  const days = floorDiv(t, MS_PER_DAY);
  let msOfDay = t - days * MS_PER_DAY;
  // Howard Hinnant's civil_from_days, as in crates/snowflake/src/time.rs.
  const z = days + 719468n;
  const era = floorDiv(z, 146097n);
  const doe = z - era * 146097n;
  const yoe = (doe - doe / 1460n + doe / 36524n - doe / 146096n) / 365n;
  const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
  const mp = (5n * doy + 2n) / 153n;
  const day = doy - (153n * mp + 2n) / 5n + ONE;
  const month = mp < 10n ? mp + 3n : mp - 9n;
  const year = yoe + era * 400n + (month <= 2n ? ONE : ZERO);
  const hour = msOfDay / 3600000n;
  msOfDay %= 3600000n;
  const minute = msOfDay / 60000n;
  msOfDay %= 60000n;
  const second = msOfDay / 1000n;
  const milli = msOfDay % 1000n;
  const y = year >= ZERO && year <= 9999n ? pad(year, 4) : `${year < ZERO ? '-' : '+'}${pad(year < ZERO ? -year : year, 6)}`;
  return `${y}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(milli, 3)}Z`;
}

// ---- values -----------------------------------------------------------------

/** A field by name, or null. */
export function field(layout, name) {
  return layout.fields.find((f) => f.name === name) || null;
}

/**
 * The one field-value parser, as Layout::parse_value: a whole number within
 * the field's width. A minus sign or more digits than fit are out of range;
 * anything else that is not digits is not a number.
 */
export function parseValue(layout, name, text) {
  const f = field(layout, name);
  if (!f) throw new EngineError('field.unknown', name, name, { known: layout.fields.map((x) => x.name) });
  const digits = text.startsWith('-') ? text.slice(1) : text;
  if (digits === '' || !/^[0-9]+$/.test(digits)) {
    throw new EngineError('field.notANumber', f.name, text, { max: f.max, bits: f.bits });
  }
  const value = BigInt(text);
  if (value < ZERO || value > U64_MAX || value > f.max) {
    throw new EngineError('field.outOfRange', f.name, text, { max: f.max, bits: f.bits });
  }
  return value;
}

/**
 * Composes an ID from a Unix-ms timestamp and field values by name (BigInts);
 * fields left out are 0. The time is checked first, then the fields in the
 * order given; nothing is masked.
 */
export function compose(layout, timestampMs, values = {}) {
  let raw = timeUnits(layout, timestampMs) << BigInt(layout.timeShift);
  for (const [name, value] of Object.entries(values)) {
    const f = field(layout, name);
    if (!f) throw new EngineError('field.unknown', name, name, { known: layout.fields.map((x) => x.name) });
    const v = BigInt(value);
    if (v < ZERO || v > f.max) throw new EngineError('field.outOfRange', f.name, v.toString(), { max: f.max, bits: f.bits });
    raw |= v << BigInt(f.shift);
  }
  return raw;
}

/**
 * Decodes an ID under a layout: its time, every field and the segments that
 * cover all 64 bits, most significant first. An ID that uses a bit the layout
 * keeps zero (the sign bit, or the top bits of a narrow layout) is an error.
 */
export function decode(layout, id) {
  const raw = BigInt(id);
  if (raw < ZERO || raw > U64_MAX) throw new EngineError('id.tooBig', 'id', raw.toString());
  if (raw > layout.maxId) {
    const code = layout.signBit ? 'id.signBit' : 'id.tooWide';
    throw new EngineError(code, 'id', raw.toString(), { layout: layoutName(layout), max: layout.maxId });
  }
  const units = (raw >> BigInt(layout.timeShift)) & layout.maxUnits;
  const fields = layout.fields.map((f) => [f.name, (raw >> BigInt(f.shift)) & f.max]);
  const segments = [];
  const top = 64 - layout.totalBits;
  if (top > 0) segments.push(segment(layout.signBit ? SIGN_FIELD : UNUSED_FIELD, top, ZERO));
  segments.push(segment(TIME_FIELD, layout.timeBits, units));
  layout.fields.forEach((f, i) => segments.push(segment(f.name, f.bits, fields[i][1])));
  return {
    id: raw,
    layout,
    units,
    timestampMs: timestampOf(layout, units),
    fields,
    sequence: layout.sequence ? fields.find(([n]) => n === layout.sequence)[1] : null,
    binary: raw.toString(2).padStart(64, '0'),
    segments,
  };
}

function segment(name, bits, value) {
  return { name, bits, value, binary: value.toString(2).padStart(bits, '0') };
}

/**
 * The smallest and largest ID the layout can produce between two Unix-ms
 * times, both inclusive, for `WHERE id BETWEEN first AND last`.
 */
export function bounds(layout, fromMs, toMs) {
  const from = BigInt(fromMs);
  const to = BigInt(toMs);
  if (from > to) throw new EngineError('window.reversed', 'from', from.toString(), { to });
  const shift = BigInt(layout.timeShift);
  let first;
  try {
    first = timeUnits(layout, from) << shift;
  } catch (err) {
    throw new EngineError(err.code, 'from', err.value, err.vars);
  }
  let lastUnits;
  try {
    lastUnits = timeUnits(layout, to);
  } catch (err) {
    throw new EngineError(err.code, 'to', err.value, err.vars);
  }
  return { first, last: (lastUnits << shift) | maxOf(layout.timeShift) };
}

// ---- text forms -------------------------------------------------------------

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

// ---- every preset at once ---------------------------------------------------

// An ID this far past "now" still counts as possible: clocks disagree a little.
const FUTURE_SLACK_MS = 60000n;

/**
 * One ID read under every preset. Each reading is `impossible` (the ID uses a
 * bit the layout keeps zero), `implausible` (a time in the future, or before
 * the platform began issuing such IDs) or `possible`.
 */
export function decodeEverywhere(id, nowMs) {
  const now = BigInt(nowMs);
  return presets().map((layout) => {
    try {
      const decoded = decode(layout, id);
      const ts = decoded.timestampMs;
      let verdict = 'possible';
      let reason = null;
      if (ts > now + FUTURE_SLACK_MS) {
        verdict = 'implausible';
        reason = 'future';
      } else if (layout.since !== null && ts < layout.since) {
        verdict = 'implausible';
        reason = 'beforePlatform';
      }
      return { layout, decoded, verdict, reason, error: null };
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      return { layout, decoded: null, verdict: 'impossible', reason: 'bits', error };
    }
  });
}

// ---- bulk -------------------------------------------------------------------

export const BULK_LIMIT = 10000;

/**
 * Decodes one ID a line. Blank lines are skipped; a bad line becomes an error
 * row in its place and the rest go on. More than BULK_LIMIT IDs is refused.
 */
export function decodeMany(layout, text, format = 'auto') {
  const lines = text.split(/\r?\n/);
  const rows = [];
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const row = { line: i + 1, input: trimmed, decoded: null, error: null };
    try {
      row.decoded = decode(layout, parseId(trimmed, format));
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      row.error = error;
    }
    rows.push(row);
  });
  if (rows.length > BULK_LIMIT) throw new EngineError('bulk.tooMany', 'bulk', String(rows.length), { limit: BigInt(BULK_LIMIT) });
  return rows;
}

/** A CSV field, quoted when it must be (RFC 4180). */
export function csvField(value) {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const LIMITS = Object.freeze({ U64_MAX, I64_MAX, JS_SAFE_MAX });

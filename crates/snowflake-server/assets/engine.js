// The engine: what the Rust core (crates/snowflake) does, in the browser.
// Layouts (presets and custom specs), compose, decode, bounds and decoding
// under every preset; text forms are in idtext.js, many IDs at once in
// many.js. No DOM, no clock, no language: the view passes "now" in, and turns
// an EngineError into words with strings.js.
//
// The presets are not written here: the page carries the core's table as
// data (a script element of type application/json, id "presets"), and `new
// Presets(table)` builds them, so the page and the API judge an ID alike.
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
// A preset's platform comes last: withEpoch and withTick drop it, as the
// core's Layout::platform() has none for a preset given another epoch or tick.
function build({ name = null, epoch = ZERO, tick = ONE, time, fields, sequence = null, platform = null }) {
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
    platform: null,
    epochMs: ZERO,
    tickMs: ONE,
  };
  const checked = withTick(withEpoch(layout, epoch), tick);
  return platform ? Object.freeze({ ...checked, platform: Object.freeze(platform) }) : checked;
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
  const epoch = BigInt(epochMs);
  const next = { ...layout, epochMs: epoch, platform: epoch === layout.epochMs ? layout.platform : null };
  checkTimeRange(next, 'epoch', epochMs);
  return finish(next);
}

/** This layout with another tick (ms per time unit, at least 1). */
export function withTick(layout, tickMs) {
  const tick = BigInt(tickMs);
  if (tick < ONE) throw new EngineError('tick.zero', 'tick_ms', String(tickMs));
  const next = { ...layout, tickMs: tick, platform: tick === layout.tickMs ? layout.platform : null };
  checkTimeRange(next, 'tick_ms', tickMs);
  return finish(next);
}

/** The layout's display name: the preset's, or the spec written out. */
export function layoutName(layout) {
  return layout.name ?? layout.spec;
}

/**
 * A custom layout from its spec: fields most significant first,
 * `time:41,datacenter:5,machine:5,sequence:12`. The field named `sequence`
 * is the sequence. Presets.parseLayout reads preset names too.
 */
export function parseSpec(input) {
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

// ---- presets ----------------------------------------------------------------

// A whole number from the core's table as a BigInt. JSON gives a double:
// past 2^53 it is no longer the integer the core wrote (page.rs checks that
// none is), so such a value is refused rather than rounded.
function exact(value, what) {
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return BigInt(value);
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new Error(`presets: ${what} is ${JSON.stringify(value)}, not an exact whole number`);
}

// One entry of the core's table (its JSON of a layout, plus the platform) as
// the arguments of build().
function definition(entry) {
  const { name, platform } = entry;
  return {
    name,
    epoch: exact(entry.epoch_ms, `${name}'s epoch_ms`),
    tick: exact(entry.tick_ms, `${name}'s tick_ms`),
    time: entry.time_bits,
    fields: entry.fields.map(([field, bits]) => [field, bits]),
    sequence: entry.sequence ?? null,
    platform: platform ? { name: platform.name, launchedMs: exact(platform.launched_ms, `${name}'s launched_ms`) } : null,
  };
}

/**
 * The presets, from the core's table as the page carries it:
 * `{ future_slack_ms, presets: [{ name, spec, epoch_ms, tick_ms, time_bits,
 * fields: [[name, bits]], sequence, platform: { name, launched_ms } }] }`.
 * A table that does not describe valid layouts, or whose spec disagrees with
 * its fields, is refused when the page starts, not while someone decodes.
 */
export class Presets {
  constructor(table) {
    this.futureSlackMs = exact(table.future_slack_ms, 'future_slack_ms');
    this.layouts = Object.freeze(
      table.presets.map((entry) => {
        const layout = build(definition(entry));
        if (entry.spec !== undefined && entry.spec !== layout.spec) {
          throw new Error(`presets: ${entry.name}'s spec ${entry.spec} is not its fields, ${layout.spec}`);
        }
        return layout;
      }),
    );
    this.names = Object.freeze(this.layouts.map((layout) => layout.name));
  }

  /** A preset by name, ASCII case ignored; null when there is none. */
  get(name) {
    const wanted = String(name).toLowerCase();
    return this.layouts.find((layout) => layout.name === wanted) || null;
  }

  /** Every preset, in the core's order. */
  all() {
    return this.layouts;
  }

  /** The one layout parser: a preset name, or a spec (see parseSpec). */
  parseLayout(input) {
    return this.get(input) ?? parseSpec(input);
  }

  /**
   * One ID read under every preset, as the core's Readings::new judges it.
   * Each reading is `impossible` (the ID uses a bit the layout keeps zero),
   * `implausible` (a time more than the slack past "now", or before the
   * preset's platform began issuing IDs) or `possible`.
   */
  decodeEverywhere(id, nowMs) {
    const now = BigInt(nowMs);
    return this.layouts.map((layout) => {
      try {
        const decoded = decode(layout, id);
        const ts = decoded.timestampMs;
        let verdict = 'possible';
        let reason = null;
        if (ts > now + this.futureSlackMs) {
          verdict = 'implausible';
          reason = 'future';
        } else if (layout.platform && ts < layout.platform.launchedMs) {
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
export const LIMITS = Object.freeze({ U64_MAX, I64_MAX, JS_SAFE_MAX });

// The snowflake core, compiled to WebAssembly (crates/snowflake-wasm), and
// the one JavaScript file that calls it: the npm package's model (index.js
// loads the module's bytes and calls init) and the web page's (its script
// carries the bytes inline). Nothing here decides anything about an ID:
// layouts, compose, decode, text forms, readings, bounds, masking and the
// generator are the core's and the masking crate's, and so are the words of
// every error they raise (SnowflakeError: kind, field, message).
//
// What this file does: it turns JavaScript values into what the module takes
// (IDs and times as 64-bit integers, text as UTF-8 in the module's input
// buffer), calls it, and turns the answer back: numbers from its tables, text
// and JSON from its output buffer. A value is a Number where a double holds
// it exactly and a BigInt where it may not: IDs are BigInts (or decimal
// strings, as the API writes them); a field wider than 53 bits, or a layout
// whose times pass 2^53 ms, gives BigInts. The crate's module doc describes
// the boundary from the other side.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The module's answer for a call that failed; the output then holds the error.
const FAILED = -1;
// A generator's tolerance that asks for the core's default (any below 0).
const CORE_TOLERANCE = -1n;
// The slots of its tables of numbers (crates/snowflake-wasm/src/reply.rs).
const SLOTS = 4 + 2 * 63;
// What sf_layout_new's `given` says follows the spec.
const EPOCH_GIVEN = 1;
const TICK_GIVEN = 2;
// A part of a text input ends at this character (abi.rs, SEP).
const SEP = '\0';
// The largest whole number a double holds exactly.
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
// The widest field whose values are always exact as a double.
const SAFE_BITS = 53;
// The largest ID, and the largest Unix ms the core holds (an i64).
const U64_MAX = (1n << 64n) - 1n;
const I64_MAX = (1n << 63n) - 1n;
// The generator's clocks, in the order the module numbers them (clock.rs).
const CLOCKS = {
  date: () => Date.now(),
  performance: () => Math.floor(performance.timeOrigin + performance.now()),
};
const CLOCK_NAMES = Object.keys(CLOCKS);
const CLOCK_READERS = Object.values(CLOCKS);

let wasm = null;
let starting = null;
let bytes = new Uint8Array(0);
let nums = new BigUint64Array(0);
let doubles = new Float64Array(0);
let tables = null;
const presetsByName = new Map();
const formsByName = new Map();
const layoutCache = new Map();
const LAYOUT_CACHE_SIZE = 256;

// The handle a layout, masker or generator is known by in the module.
const HANDLE = Symbol('handle');
// Only this file makes layouts and breakdowns.
const MADE_HERE = Symbol('made here');

/**
 * An error of the core or the masking crate: `kind` is its class as the
 * crate names it (`InvalidInput`, `ClockBackwards`, `TimeExhausted`, …),
 * `field` the input at fault (`machine`, `timestamp`, `id`, `layout`, `key`,
 * …) or null, and `message` the words the command and the API use.
 */
export class SnowflakeError extends Error {
  constructor(kind, field, message) {
    super(message);
    this.name = 'SnowflakeError';
    this.kind = kind;
    this.field = field;
  }
}

// ---- the module --------------------------------------------------------------

const imports = {
  snowflake: {
    now_ms: (clock) => CLOCK_READERS[clock](),
    wait_toward: (clock, target) => waitToward(CLOCK_READERS[clock], target),
  },
};

let sleeper = null;

// A short wait for the generator, which reads the clock again after it: at
// most a millisecond, asleep where the thread may block (Node), else in a
// loop (a page's main thread may not block).
function waitToward(now, target) {
  const gap = Math.min(target - now(), 1);
  if (!(gap > 0)) return;
  try {
    sleeper ??= new Int32Array(new SharedArrayBuffer(4));
    Atomics.wait(sleeper, 0, 0, gap);
  } catch {
    const until = performance.now() + gap;
    while (performance.now() < until && now() < target);
  }
}

/**
 * Instantiates the module from its bytes (a BufferSource). Every other
 * function here needs it done; calling it again does nothing.
 */
export async function init(source) {
  starting ??= WebAssembly.instantiate(source, imports).then(({ instance }) => {
    wasm = instance.exports;
    refresh();
    tables = JSON.parse(call(wasm.sf_tables()));
    for (const entry of tables.presets) presetsByName.set(entry.name, parseLayout(entry.name));
    tables.text_forms.forEach((form, at) => formsByName.set(form.name, at));
  });
  return starting;
}

function ready() {
  if (!wasm) throw new Error('snowflake: the WebAssembly module is not loaded yet: await init(bytes) first');
}

// The views of the module's memory, made again after it grows (which
// detaches the old ones: their length becomes 0).
function refresh() {
  bytes = new Uint8Array(wasm.memory.buffer);
  nums = new BigUint64Array(wasm.memory.buffer, wasm.sf_nums_ptr(), SLOTS);
  doubles = new Float64Array(wasm.memory.buffer, wasm.sf_doubles_ptr(), SLOTS);
}

function views() {
  if (nums.length === 0) refresh();
}

function input(text) {
  const encoded = encoder.encode(text);
  const at = wasm.sf_input(encoded.length);
  refresh();
  bytes.set(encoded, at);
  return encoded;
}

function output() {
  views();
  const at = wasm.sf_out_ptr();
  return decoder.decode(bytes.subarray(at, at + wasm.sf_out_len()));
}

function failure() {
  const { kind, field, message } = JSON.parse(output());
  return new SnowflakeError(kind, field, message);
}

// The output of a call that worked, or its error thrown.
function call(status) {
  if (status === FAILED) throw failure();
  return output();
}

function check(status) {
  if (status === FAILED) throw failure();
  views();
  return status;
}

// ---- values in ----------------------------------------------------------------

/**
 * An ID from a BigInt, a decimal or `0x` hexadecimal string (the core's one
 * ID parser), or a Number that a double holds exactly.
 */
function idOf(id) {
  if (typeof id === 'bigint' && id >= 0n && id <= U64_MAX) return id;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return BigInt(id);
  if (typeof id === 'number' && Number.isInteger(id)) {
    throw new SnowflakeError('InvalidInput', 'id', `id ${id} is past 2^53 as a JavaScript number, so it may have been rounded; give IDs as BigInts or strings`);
  }
  return fromText(String(id));
}

// Unix milliseconds as the module takes them, from a Number (a safe
// integer), a BigInt, a Date, or a string the core reads (digits or an
// RFC 3339 date); the core's "not a time" error otherwise.
function msOf(field, time) {
  if (typeof time === 'number' && Number.isSafeInteger(time)) return BigInt(time);
  if (typeof time === 'bigint' && time >= -I64_MAX - 1n && time <= I64_MAX) return time;
  if (time instanceof Date && !Number.isNaN(time.getTime())) return BigInt(time.getTime());
  if (typeof time !== 'string') notATime(field, time);
  input(`${field}${SEP}${time}`);
  check(wasm.sf_read_time());
  return BigInt.asIntN(64, nums[0]);
}

// A time's text for the module, which reads it as the command reads
// --epoch; the core's "not a time" error for a value that is none.
function msText(field, time) {
  return typeof time === 'string' ? time : String(msOf(field, time));
}

// Throws the core's "not a time" error for a value that is no time and no
// text: a Number that is no safe integer (its digits would name another
// time), an invalid Date, anything else.
function notATime(field, time) {
  input(`${field}${SEP}${time instanceof Date ? 'Invalid Date' : String(time)}`);
  wasm.sf_not_a_time();
  throw failure();
}

function layoutOf(layout) {
  if (layout instanceof Layout) return layout;
  return parseLayout(String(layout));
}

// ---- layouts -----------------------------------------------------------------

const freeLayout = new FinalizationRegistry((handle) => wasm.sf_layout_free(handle));

/**
 * A layout: the core's description of it, exact. `name` is the preset's
 * name or the spec; `epochMs`, `tickMs`, `lastMs` and `maxId` are BigInts;
 * `fields` lists `{ name, bits, max, shift }` most significant first (`max`
 * a BigInt); `platform` is `{ name, launched_ms, launched }` for a preset
 * read as it is, else null. `toJSON()` gives the core's JSON of it, as
 * `GET /api/v1/layouts` and `snowflake layouts --json` write it.
 */
export class Layout {
  constructor(token, handle, json) {
    if (token !== MADE_HERE) throw new TypeError('a Layout is made by parseLayout()');
    const described = JSON.parse(json);
    const exact = Array.from(nums.subarray(0, 4 + 2 * described.fields.length));
    this[HANDLE] = handle;
    this.name = described.name;
    this.spec = described.spec;
    this.epochMs = BigInt.asIntN(64, exact[0]);
    this.tickMs = exact[1];
    this.lastMs = BigInt.asIntN(64, exact[2]);
    this.maxId = exact[3];
    this.bits = described.bits;
    this.timeBits = described.time_bits;
    this.signBit = described.sign_bit;
    this.jsSafe = described.js_safe;
    this.idsPerMs = described.ids_per_ms;
    this.nodes = described.nodes;
    this.sequence = described.sequence;
    this.platform = described.platform ? Object.freeze(described.platform) : null;
    this.fields = Object.freeze(
      described.fields.map(([name, bits], i) => Object.freeze({ name, bits, max: exact[4 + 2 * i], shift: Number(exact[5 + 2 * i]) })),
    );
    // Times are Numbers when every time of the layout is exact as one.
    this.timesAreNumbers = this.epochMs >= -SAFE && this.lastMs <= SAFE;
    this.places = new Map(this.fields.map((f, i) => [f.name, i]));
    this.placeNumbers = this.fields.map((_, i) => BigInt(i));
    this.names = this.fields.map((f) => f.name);
    // compose's memory of the names it was last given, and their places.
    this.seenNames = [];
    this.seenPlaces = [];
    this.fieldsAreNumbers = this.fields.every((f) => f.bits <= SAFE_BITS);
    this.readFields = (this.fieldsAreNumbers && FIELD_READERS[this.fields.length]) || readFieldsOneByOne(this);
    this.json = described;
    Object.freeze(this);
  }

  toJSON() {
    const { platform, ...layout } = this.json;
    return layout;
  }

  toString() {
    return this.name;
  }
}

/**
 * A layout as the command reads `--layout`, `--epoch` and `--tick-ms`: a
 * preset's name (`twitter`, `discord`, …) or a spec, fields most significant
 * first (`time:41,datacenter:5,machine:5,sequence:12`, the field named
 * `sequence` the sequence), with the epoch (Unix ms as a Number, BigInt,
 * string of digits, an RFC 3339 date or a Date) and the tick (whole ms) replaced where given.
 */
export function parseLayout(spec, { epoch, tickMs } = {}) {
  ready();
  if (epoch === undefined && tickMs === undefined) {
    const known = presetsByName.get(spec) ?? layoutCache.get(spec);
    if (known) return known;
    const layout = makeLayout(String(spec), 0);
    if (layoutCache.size >= LAYOUT_CACHE_SIZE) layoutCache.delete(layoutCache.keys().next().value);
    layoutCache.set(spec, layout);
    return layout;
  }
  let given = 0;
  const parts = [String(spec)];
  if (epoch !== undefined) {
    given |= EPOCH_GIVEN;
    parts.push(msText('epoch', epoch));
  }
  if (tickMs !== undefined) {
    given |= TICK_GIVEN;
    parts.push(String(tickMs));
  }
  return makeLayout(parts.join(SEP), given);
}

// A layout the module reads from `text`, freed when it is collected.
function makeLayout(text, given) {
  input(text);
  const handle = check(wasm.sf_layout_new(given));
  const layout = new Layout(MADE_HERE, handle, output());
  freeLayout.register(layout, handle);
  return layout;
}

/** The core's presets, in its order. */
export function presets() {
  ready();
  return [...presetsByName.values()];
}

/** The text forms an ID can be written in, in the core's order: `decimal`, `hex`, `base32`, … */
export function textForms() {
  ready();
  return tables.text_forms.map((form) => form.name);
}

/**
 * The other tables of the core: `future_slack_ms` (how far in the future a
 * reading's time may be and stay plausible), `mask_min_bits` (the narrowest
 * layout masking takes), `key_hex_len` and `key_bits` (a mask key's size),
 * and `text_forms` with each form's fixed `width` (or null) and what it
 * `allowed`.
 */
export function limits() {
  ready();
  const { presets: _, ...rest } = tables;
  return rest;
}

// ---- decode ------------------------------------------------------------------

/**
 * An ID read through its layout, in the shape of the API's breakdown:
 * `id` (decimal string), `layout` (its name), `timestamp_ms`, `time`
 * (RFC 3339), `fields` by name, `binary` (64 digits), `segments` and `text`
 * (the other text forms). `time`, `binary`, `segments` and `text` are
 * computed when first read; `toJSON()` gives them all, so that
 * `JSON.stringify` writes what the API writes.
 */
export class Decoded {
  #layout;
  #raw;
  #id = null;
  #time = null;
  #more = null;

  constructor(token, layout, raw, timestampMs, fields) {
    if (token !== MADE_HERE) throw new TypeError('a Decoded is made by decode()');
    this.#layout = layout;
    this.#raw = raw;
    this.timestamp_ms = timestampMs;
    this.fields = fields;
  }

  get id() {
    return (this.#id ??= this.#raw.toString());
  }

  get layout() {
    return this.#layout.name;
  }

  get time() {
    return (this.#time ??= formatTime(this.timestamp_ms));
  }

  // The parts the core writes out: binary, segments and text, asked for once.
  #breakdown() {
    if (this.#more) return this.#more;
    const json = JSON.parse(call(wasm.sf_breakdown(this.#layout[HANDLE], this.#raw)));
    // A segment wider than a double's 53 bits is read from its binary digits.
    for (const segment of json.segments) {
      if (segment.bits > SAFE_BITS) segment.value = BigInt(`0b${segment.binary}`);
      Object.freeze(segment);
    }
    this.#more = { binary: json.binary, segments: Object.freeze(json.segments), text: Object.freeze(json.text) };
    return this.#more;
  }

  get binary() {
    return this.#breakdown().binary;
  }

  get segments() {
    return this.#breakdown().segments;
  }

  get text() {
    return this.#breakdown().text;
  }

  /** The ID as a BigInt. */
  get value() {
    return this.#raw;
  }

  /** The layout it was read with. */
  get layoutUsed() {
    return this.#layout;
  }

  toJSON() {
    return {
      id: this.id,
      layout: this.layout,
      timestamp_ms: this.timestamp_ms,
      time: this.time,
      fields: this.fields,
      binary: this.binary,
      segments: this.segments,
      text: this.text,
    };
  }
}

/**
 * Decodes an ID (BigInt, or a decimal or 0x hexadecimal string) under a
 * layout (a preset's name, a spec, or a Layout; twitter when left out).
 * An ID that sets a bit the layout keeps 0 is the core's error.
 */
export function decode(id, layout = 'twitter') {
  ready();
  const l = layoutOf(layout);
  const raw = typeof id === 'bigint' && id >= 0n && id <= U64_MAX ? id : idOf(id);
  if (wasm.sf_decode(l[HANDLE], raw) === FAILED) throw failure();
  views();
  const timestampMs = l.timesAreNumbers ? doubles[0] : BigInt.asIntN(64, nums[0]);
  return new Decoded(MADE_HERE, l, raw, timestampMs, l.readFields(l.names, l.fieldsAreNumbers ? doubles : nums));
}

// The fields of a decoded ID as one object literal, its keys the layout's
// names: a literal of a fixed shape is made fast, where keys set one by one
// in a loop are not. Values start at slot 2 (after the time and its units).
const FIELD_READERS = [
  () => ({}),
  (k, v) => ({ [k[0]]: v[2] }),
  (k, v) => ({ [k[0]]: v[2], [k[1]]: v[3] }),
  (k, v) => ({ [k[0]]: v[2], [k[1]]: v[3], [k[2]]: v[4] }),
  (k, v) => ({ [k[0]]: v[2], [k[1]]: v[3], [k[2]]: v[4], [k[3]]: v[5] }),
];

// For a layout with more fields than FIELD_READERS covers, or with a field
// wider than a double holds exactly (whose values are BigInts).
function readFieldsOneByOne(layout) {
  return () => {
    const fields = {};
    layout.fields.forEach((f, i) => {
      fields[f.name] = f.bits > SAFE_BITS ? nums[2 + i] : doubles[2 + i];
    });
    return fields;
  };
}

// ---- compose -----------------------------------------------------------------

function wholeU64(value) {
  return (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) || (typeof value === 'bigint' && value >= 0n && value <= U64_MAX);
}

/**
 * Composes an ID (a BigInt) from `timestamp` (Unix ms as a Number, BigInt or
 * string of digits, an RFC 3339 date, or a Date; now when left out) and `fields` by name
 * (fields left out are 0), checked as the command checks them: a value out
 * of its field's range, not a whole number, or a field the layout lacks, is
 * the core's error.
 */
export function compose({ timestamp, fields = {} } = {}, layout = 'twitter') {
  ready();
  const l = layoutOf(layout);
  const time = timestamp ?? Date.now();
  views();
  // Whole Numbers go as doubles (no BigInt made for any of them), whole
  // BigInts as 64-bit numbers; anything else, or a name the layout lacks,
  // as text, which the core reads and refuses in its own words.
  let count = 0;
  let numbers = typeof time === 'number' && Number.isSafeInteger(time);
  let whole = true;
  // The names come in the same order call after call, as a caller writes
  // its object the same way: each is checked against the last call's before
  // it is looked up.
  const seen = l.seenNames;
  const seenPlaces = l.seenPlaces;
  for (const name in fields) {
    const value = fields[name];
    let place;
    if (seen[count] === name) {
      place = seenPlaces[count];
    } else {
      place = l.places.get(name);
      seen[count] = name;
      seenPlaces[count] = place;
    }
    if (place === undefined || !wholeU64(value)) {
      whole = false;
      break;
    }
    if (typeof value === 'number') {
      doubles[2 * count] = place;
      doubles[2 * count + 1] = value;
    } else {
      numbers = false;
    }
    count += 1;
  }
  if (whole && numbers) {
    // The ID comes back as the call's answer, signed: a negative one is a
    // refusal (-1) or an ID of 2^63 and up, which the call that answers
    // with a status gives unsigned, or as the core's error.
    const id = wasm.sf_compose_doubles_id(l[HANDLE], time, count);
    if (id >= 0n) return id;
    check(wasm.sf_compose_doubles(l[HANDLE], time, count));
  } else if (whole) {
    // Read first: reading a time's text uses the buffers the values go in.
    const ms = msOf('timestamp', time);
    count = 0;
    for (const name in fields) {
      nums[2 * count] = l.placeNumbers[l.places.get(name)];
      nums[2 * count + 1] = BigInt(fields[name]);
      count += 1;
    }
    check(wasm.sf_compose_values(l[HANDLE], ms, count));
  } else {
    const parts = [];
    for (const name in fields) parts.push(name, String(fields[name]));
    const ms = msOf('timestamp', time);
    input(parts.join(SEP));
    check(wasm.sf_compose(l[HANDLE], ms));
  }
  return nums[0];
}

/**
 * A time from its text as the command reads `--timestamp`: Unix
 * milliseconds, or an RFC 3339 date (`2024-01-31T12:00:00+01:00`, the
 * fraction cut to whole milliseconds); Unix ms as a BigInt. `field` names
 * the time in the error for any other text.
 */
export function parseTime(text, field = 'timestamp') {
  ready();
  if (typeof text !== 'string') notATime(field, text);
  return msOf(field, text);
}

/** A field's value from its text, by the layout's one field-value parser: a BigInt. */
export function parseValue(layout, name, text) {
  ready();
  const l = layoutOf(layout);
  input(`${name}${SEP}${text}`);
  check(wasm.sf_parse_value(l[HANDLE]));
  return nums[0];
}

/** The layout's time units at `timestamp` (a BigInt); the core's error before its epoch or past its last time. */
export function timeUnits(layout, timestamp) {
  ready();
  const l = layoutOf(layout);
  check(wasm.sf_time_units(l[HANDLE], msOf('timestamp', timestamp)));
  return nums[0];
}

// ---- readings, bounds, time --------------------------------------------------

/**
 * The ID read under every preset, each `possible`, `implausible` (a time
 * more than a minute past `now`, or before the preset's platform issued
 * such IDs) or `impossible` (a bit the layout keeps 0): the API's
 * `?layout=all` answer, `{ id, now_ms, now, readings: [{ layout, platform,
 * launched, verdict, reason, decoded }] }`.
 */
export function readings(id, { now } = {}) {
  ready();
  return JSON.parse(call(wasm.sf_readings(idOf(id), msOf('now', now ?? Date.now()))));
}

/**
 * The first and last ID the layout can make from `from` to `to` (Unix ms or
 * Dates, both inclusive), for `WHERE id BETWEEN first AND last`: the API's
 * `{ layout, from_ms, from, to_ms, to, first, last }`, IDs as strings.
 */
export function bounds(from, to, layout = 'twitter') {
  ready();
  const l = layoutOf(layout);
  return JSON.parse(call(wasm.sf_bounds(l[HANDLE], msOf('from', from), msOf('to', to))));
}

/** Unix ms as the core writes a time: RFC 3339 in UTC with milliseconds (ISO 8601's expanded year outside 0 to 9999). */
export function formatTime(ms) {
  ready();
  return call(wasm.sf_time(msOf('timestamp', ms)));
}

// ---- text forms --------------------------------------------------------------

function formOf(form) {
  const known = formsByName.get(form);
  if (known !== undefined) return known;
  input(String(form));
  return check(wasm.sf_text_form(0));
}

/** The ID written in a text form (`decimal` when left out; see textForms()). */
export function toText(id, form = 'decimal') {
  ready();
  return call(wasm.sf_to_text(formOf(form), idOf(id)));
}

/**
 * The ID (a BigInt) a text holds in a form, or, with no form or `auto`, in
 * decimal or `0x` hexadecimal, as the core's one ID parser reads it.
 */
export function fromText(text, form = 'auto') {
  ready();
  const at = form === 'auto' ? -1 : formOf(form);
  input(String(text));
  check(wasm.sf_from_text(at));
  return nums[0];
}

// ---- masking -----------------------------------------------------------------

const freeMasker = new FinalizationRegistry((handle) => wasm.sf_masker_free(handle));

/**
 * A keyed, reversible permutation of one layout's IDs (FF1, NIST SP
 * 800-38G, as `snowflake mask` runs it). `key` is the text of a key file:
 * 64 hexadecimal characters. Its bytes are wiped from the module's input as
 * soon as the masker holds the key; `free()` drops the key's schedule, which
 * the masking crate wipes.
 */
export class Masker {
  constructor(key, layout = 'twitter') {
    ready();
    const l = layoutOf(layout);
    const text = input(String(key));
    const handle = wasm.sf_masker_new(l[HANDLE]);
    text.fill(0);
    wasm.sf_input(text.length);
    if (handle === FAILED) throw failure();
    this[HANDLE] = handle;
    this.layout = l;
    freeMasker.register(this, handle, this);
  }

  #run(fn, id) {
    if (this[HANDLE] < 0) throw new Error('snowflake: this masker was freed');
    check(fn(this[HANDLE], idOf(id)));
    return nums[0];
  }

  /** The masked form of an ID of the layout (a BigInt). */
  mask(id) {
    return this.#run(wasm.sf_mask, id);
  }

  /** The ID a masked ID hides (a BigInt). */
  unmask(masked) {
    return this.#run(wasm.sf_unmask, masked);
  }

  /** Drops the key now rather than when the masker is collected. */
  free() {
    if (this[HANDLE] < 0) return;
    freeMasker.unregister(this);
    wasm.sf_masker_free(this[HANDLE]);
    this[HANDLE] = -1;
  }
}

/** Checks that a layout can be masked (FF1 needs at least 20 bits); throws the masking crate's error if not. */
export function checkMaskable(layout) {
  ready();
  check(wasm.sf_masker_check(layoutOf(layout)[HANDLE]));
}

/** Masks one ID under a key; for many, make one Masker. */
export function mask(id, key, layout = 'twitter') {
  return withMasker(key, layout, (masker) => masker.mask(id));
}

/** Unmasks one ID under a key; for many, make one Masker. */
export function unmask(masked, key, layout = 'twitter') {
  return withMasker(key, layout, (masker) => masker.unmask(masked));
}

// `use` with a masker made for one call, whose key is dropped when it returns or throws.
function withMasker(key, layout, use) {
  const masker = new Masker(key, layout);
  try {
    return use(masker);
  } finally {
    masker.free();
  }
}

// ---- the generator -----------------------------------------------------------

const freeGenerator = new FinalizationRegistry((handle) => wasm.sf_generator_free(handle));

/**
 * The core's generator: IDs strictly increasing, on `clock` (`date`,
 * Date.now(), the default; or `performance`, performance.timeOrigin +
 * performance.now()), for the node whose fields `node` gives by name
 * (fields left out are 0). A clock that steps back by up to `toleranceMs`
 * (the core's default when left out) is waited out; further, next() throws
 * the core's ClockBackwards error until the clock catches up. One generator
 * per node and process: two would hand out the same IDs.
 */
export class Generator {
  constructor(layout = 'twitter', { node = {}, clock = 'date', toleranceMs } = {}) {
    ready();
    const l = layoutOf(layout);
    const source = CLOCK_NAMES.indexOf(clock);
    if (source < 0) throw new SnowflakeError('InvalidInput', 'clock', `clock ${clock} is not allowed; a clock is ${CLOCK_NAMES.join(' or ')}`);
    const parts = [];
    for (const name in node) parts.push(name, String(node[name]));
    input(parts.join(SEP));
    if (toleranceMs !== undefined && !wholeU64(toleranceMs)) {
      throw new SnowflakeError('InvalidInput', 'tolerance_ms', `tolerance_ms ${toleranceMs} is not allowed; a tolerance is a whole number of milliseconds`);
    }
    const tolerance = toleranceMs === undefined ? CORE_TOLERANCE : BigInt(toleranceMs);
    const handle = wasm.sf_generator_new(l[HANDLE], source, tolerance);
    if (handle === FAILED) throw failure();
    this[HANDLE] = handle;
    this.layout = l;
    this.clock = clock;
    freeGenerator.register(this, handle, this);
  }

  /** The next ID, a BigInt. */
  next() {
    if (this[HANDLE] < 0) throw new Error('snowflake: this generator was freed');
    check(wasm.sf_generator_next(this[HANDLE]));
    return nums[0];
  }

  /** Ends the generator now rather than when it is collected. */
  free() {
    if (this[HANDLE] < 0) return;
    freeGenerator.unregister(this);
    wasm.sf_generator_free(this[HANDLE]);
    this[HANDLE] = -1;
  }
}

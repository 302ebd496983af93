// Types of snowflake-toolkit: the snowflake core compiled to WebAssembly.
// The names of the presets and the text forms are listed here as the core
// lists them; a test fails when the core gains one this file does not name.

/** The core's presets, in its order. */
export type PresetName = 'twitter' | 'discord' | 'instagram' | 'sonyflake' | 'mastodon' | 'js53';

/** The text forms an ID is written in, in the core's order. */
export type TextFormName = 'decimal' | 'hex' | 'base32' | 'base62' | 'base58';

/** An ID: a BigInt, a decimal or 0x hexadecimal string, or a Number below 2^53. */
export type IdInput = bigint | string | number;

/** A time: Unix milliseconds as a Number, a BigInt or a string of digits; an RFC 3339 date such as `2024-01-31T12:00:00Z` (or `+01:00`); or a Date. */
export type TimeInput = number | bigint | string | Date;

/** A layout: a preset's name, a spec such as `time:41,worker:10,sequence:12`, or one parseLayout made. */
export type LayoutInput = PresetName | string | Layout;

/** An error of the core or the masking crate, in the words of the command and the API. */
export class SnowflakeError extends Error {
  /** Its class as the crate names it: `InvalidInput`, `ClockBackwards`, `TimeExhausted`, … */
  readonly kind: string;
  /** The input at fault (`machine`, `timestamp`, `id`, `layout`, `key`, …), or null. */
  readonly field: string | null;
}

export interface Field {
  readonly name: string;
  readonly bits: number;
  /** The largest value the field holds. */
  readonly max: bigint;
  /** Its place from the low end of the ID. */
  readonly shift: number;
}

export interface Platform {
  readonly name: string;
  /** 00:00 UTC of the day the platform's IDs began, Unix ms. */
  readonly launched_ms: number;
  readonly launched: string;
}

/** A layout as the core describes it, exact. Made by parseLayout(). */
export class Layout {
  private constructor();
  /** The preset's name, or the spec. */
  readonly name: string;
  readonly spec: string;
  readonly epochMs: bigint;
  readonly tickMs: bigint;
  /** The last millisecond its time field reaches. */
  readonly lastMs: bigint;
  readonly maxId: bigint;
  /** Its width: 64, 63 with a sign bit, or fewer. */
  readonly bits: number;
  readonly timeBits: number;
  readonly signBit: boolean;
  /** Whether every ID stays below 2^53. */
  readonly jsSafe: boolean;
  readonly idsPerMs: number | null;
  readonly nodes: number;
  /** The sequence field's name, or null. */
  readonly sequence: string | null;
  /** For a preset read as it is; null otherwise. */
  readonly platform: Platform | null;
  /** Most significant first. */
  readonly fields: readonly Field[];
  /** The core's JSON of the layout, as `GET /api/v1/layouts` writes it. */
  toJSON(): Record<string, unknown>;
}

/** A field value: a Number for fields up to 53 bits wide, a BigInt for wider ones. */
export type FieldValue = number | bigint;

export interface Segment {
  readonly name: string;
  readonly bits: number;
  readonly value: FieldValue;
  readonly binary: string;
}

/** The other text forms of an ID, by name. */
export type TextForms = { readonly [form in Exclude<TextFormName, 'decimal'>]: string };

/** The breakdown as the API's JSON has it. */
export interface Breakdown {
  id: string;
  layout: string;
  timestamp_ms: number | bigint;
  time: string;
  fields: Record<string, FieldValue>;
  binary: string;
  segments: readonly Segment[];
  text: TextForms;
}

/** An ID read through its layout; `time`, `binary`, `segments` and `text` are computed when first read. */
export class Decoded implements Breakdown {
  private constructor();
  readonly id: string;
  readonly layout: string;
  /** A Number, or a BigInt for a layout whose times pass 2^53 ms. */
  readonly timestamp_ms: number | bigint;
  readonly time: string;
  readonly fields: Record<string, FieldValue>;
  readonly binary: string;
  readonly segments: readonly Segment[];
  readonly text: TextForms;
  /** The ID as a BigInt. */
  readonly value: bigint;
  /** The layout it was read with. */
  readonly layoutUsed: Layout;
  toJSON(): Breakdown;
}

export interface Reading {
  layout: PresetName;
  platform: string | null;
  launched: string | null;
  verdict: 'possible' | 'implausible' | 'impossible';
  /** Why it is not possible, in the core's words; null when it is. */
  reason: string | null;
  decoded: Breakdown | null;
}

export interface Readings {
  id: string;
  now_ms: number;
  now: string;
  readings: Reading[];
}

export interface Bounds {
  layout: string;
  from_ms: number;
  from: string;
  to_ms: number;
  to: string;
  /** The first and last ID, as decimal strings. */
  first: string;
  last: string;
}

export interface Limits {
  future_slack_ms: number;
  mask_min_bits: number;
  key_hex_len: number;
  key_bits: number;
  text_forms: { name: TextFormName; width: number | null; allowed: string }[];
  breakdown_forms: Exclude<TextFormName, 'decimal'>[];
  segments: { time: string; sign: string; unused: string };
}

/** The core's presets, in its order. */
export const layouts: readonly Layout[];
/** The text forms' names, in the core's order. */
export const forms: readonly TextFormName[];

/** A layout as the command reads `--layout`, `--epoch` and `--tick-ms`. */
export function parseLayout(spec: LayoutInput, options?: { epoch?: TimeInput; tickMs?: number | bigint | string }): Layout;
export function decode(id: IdInput, layout?: LayoutInput): Decoded;
export function compose(parts?: { timestamp?: TimeInput; fields?: Record<string, number | bigint | string> }, layout?: LayoutInput): bigint;
export function readings(id: IdInput, options?: { now?: TimeInput }): Readings;
export function bounds(from: TimeInput, to: TimeInput, layout?: LayoutInput): Bounds;
export function toText(id: IdInput, form?: TextFormName): string;
export function fromText(text: string, form?: TextFormName | 'auto'): bigint;
export function formatTime(ms: TimeInput): string;
/** A time from its text as the command reads `--timestamp`: Unix ms or an RFC 3339 date; Unix ms. */
export function parseTime(text: string, field?: string): bigint;
export function parseValue(layout: LayoutInput, field: string, text: string): bigint;
export function timeUnits(layout: LayoutInput, timestamp: TimeInput): bigint;
export function limits(): Limits;
export function checkMaskable(layout: LayoutInput): void;
export function mask(id: IdInput, key: string, layout?: LayoutInput): bigint;
export function unmask(masked: IdInput, key: string, layout?: LayoutInput): bigint;

/** FF1 over one layout's IDs under one key (64 hexadecimal characters). */
export class Masker {
  constructor(key: string, layout?: LayoutInput);
  readonly layout: Layout;
  mask(id: IdInput): bigint;
  unmask(masked: IdInput): bigint;
  free(): void;
}

/** The core's generator on Date.now() or performance. */
export class Generator {
  constructor(
    layout?: LayoutInput,
    options?: { node?: Record<string, number | bigint | string>; clock?: 'date' | 'performance'; toleranceMs?: number | bigint },
  );
  readonly layout: Layout;
  readonly clock: 'date' | 'performance';
  next(): bigint;
  free(): void;
}

// Times as people type and read them: in a time zone, in Unix milliseconds
// or seconds, relative to now. A JavaScript Date covers ±8.64e15 ms; beyond
// it a time is shown as the core writes it in UTC, over the whole i64.
import { formatTime, parseTime as readTime } from './snowflake.js';

const DATE_LIMIT = 8640000000000000n; // what a JavaScript Date can hold, in ms

/** The browser's own zone, or UTC when it has none to tell. */
export function localZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Whether `name` is an IANA time zone this browser knows. */
export function validZone(name) {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function zoneParts(ms, timeZone) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type) => Number(parts.find((p) => p.type === type).value);
  return { y: get('year'), mo: get('month'), d: get('day'), h: get('hour'), mi: get('minute'), s: get('second') };
}

// The zone's offset from UTC at a moment, in ms.
function zoneOffset(ms, timeZone) {
  const p = zoneParts(ms, timeZone);
  const asUtc = Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/** A time in a zone: "2024-01-31 13:00:00.000 GMT+1", the offset in `lang`'s words. */
export function zoned(ms, timeZone, lang) {
  if (ms > DATE_LIMIT || ms < -DATE_LIMIT) return formatTime(ms);
  const n = Number(ms);
  const p = zoneParts(n, timeZone);
  const name = new Intl.DateTimeFormat(lang, { timeZone, timeZoneName: 'shortOffset' })
    .formatToParts(new Date(n))
    .find((x) => x.type === 'timeZoneName').value;
  const two = (v) => String(v).padStart(2, '0');
  const milli = String(((n % 1000) + 1000) % 1000).padStart(3, '0');
  return `${String(p.y).padStart(4, '0')}-${two(p.mo)}-${two(p.d)} ${two(p.h)}:${two(p.mi)}:${two(p.s)}.${milli} ${name}`;
}

/** How long ago or ahead a time is ("15 years ago"), or '' beyond what a Date holds. */
export function relative(ms, nowMs, lang) {
  if (ms > DATE_LIMIT || ms < -DATE_LIMIT) return '';
  const diff = Number(ms - nowMs) / 1000;
  const abs = Math.abs(diff);
  const steps = [
    ['year', 31557600],
    ['month', 2629800],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  const [name, size] = steps.find(([, s]) => abs >= s) || steps[steps.length - 1];
  return new Intl.RelativeTimeFormat(lang, { numeric: 'auto' }).format(Math.round(diff / size), name);
}

/** Unix ms as the unit shows it: milliseconds, or seconds with up to three decimals. */
export function unixText(ms, unit) {
  if (unit === 'ms') return ms.toString();
  const sign = ms < 0n ? '-' : '';
  const abs = ms < 0n ? -ms : ms;
  const frac = abs % 1000n;
  return `${sign}${abs / 1000n}${frac ? `.${frac.toString().padStart(3, '0').replace(/0+$/, '')}` : ''}`;
}

/** Floors Unix ms to whole seconds, as Discord's <t:…> wants them. */
export function floorSeconds(ms) {
  const s = ms / 1000n;
  return ms < 0n && ms % 1000n !== 0n ? s - 1n : s;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A time typed by a person, as Unix-ms BigInt: a whole number (or decimal
 * seconds) in `unit`; an RFC 3339 date, read by the core as the command
 * and the API read it; or a shorter date (no seconds, `+0100`, no offset),
 * read in `timeZone` unless it names its own offset, by the same rules.
 * Null when it is none of these.
 */
export function parseTime(text, unit, timeZone) {
  if (/^-?\d+$/.test(text)) return unit === 's' ? BigInt(text) * 1000n : BigInt(text);
  if (unit === 's' && /^-?\d+\.\d{1,3}$/.test(text)) {
    const [whole, frac] = text.split('.');
    const ms = BigInt(whole.replace('-', '')) * 1000n + BigInt(frac.padEnd(3, '0'));
    return text.startsWith('-') ? -ms : ms;
  }
  // Any other number is none: the core would read it in milliseconds.
  if (/^\s*[+-]?\d+\s*$/.test(text)) return null;
  try {
    return readTime(text);
  } catch {
    // Not RFC 3339: perhaps a shorter date a person typed.
  }
  const m = DATE_RE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', offset] = m;
  // As the core reads them: a leap second is :59, a fraction is cut to ms.
  const wall = utc(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Math.min(Number(s), 59), Number(frac.slice(0, 3).padEnd(3, '0')));
  const check = new Date(wall);
  if (Number.isNaN(wall) || check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1) return null;
  if (offset) {
    if (/^z$/i.test(offset)) return BigInt(wall);
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.replace(/[^0-9]/g, '');
    return BigInt(wall - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60000);
  }
  if (timeZone === 'UTC') return BigInt(wall);
  // The wall time's offset may differ from the guess's across a DST change;
  // a second pass settles it.
  let guess = wall - zoneOffset(wall, timeZone);
  guess = wall - zoneOffset(guess, timeZone);
  return BigInt(guess);
}

// Unix ms of a UTC wall time; unlike Date.UTC, years 0 to 99 are those
// years, not 1900 to 1999.
function utc(year, month, day, hour, minute, second, ms) {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

// Every word of the page, in English and German (lang-en.js, lang-de.js),
// and the messages for the engine's errors. A message names the field as its
// label does and states what is allowed in the page's language ("Machine ID
// 32 is out of range: 0 to 31"), never in Rust's notation. Keys ending in
// "body" or "footer" hold trusted markup and are set as HTML.
import * as en from './lang-en.js';
import * as de from './lang-de.js';

export const LANGS = ['en', 'de'];

export const STRINGS = { en: en.WORDS, de: de.WORDS };

const MESSAGES = { en: en.MESSAGES, de: de.MESSAGES };

/** A string of the interface with {placeholders} filled in. */
export function translate(lang, key, vars = {}) {
  const text = STRINGS[lang]?.[key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

/** A field's label: the page's own for known names, else the name made readable. */
export function fieldLabel(lang, name) {
  const key = `field.${name}`;
  if (key in STRINGS.en) return translate(lang, key);
  return name.charAt(0).toUpperCase() + name.slice(1).replace(/_/g, ' ');
}

/**
 * Who uses a preset, in the page's words where it has them, else as the
 * core's table names the platform: a preset added to the core shows up
 * without a word added here.
 */
export function platformLabel(lang, layout) {
  const key = `platform.${layout.name}`;
  if (key in STRINGS.en) return translate(lang, key);
  return layout.platform ? layout.platform.name : '';
}

/**
 * An engine error in the page's language. `iso` turns a Unix-ms BigInt into
 * the date the message shows; `unit` is "milliseconds" or "seconds" in words.
 */
export function errorMessage(lang, error, { iso, unit = 'ms' } = {}) {
  const words = MESSAGES[lang] || MESSAGES.en;
  const format = words[error.code] || MESSAGES.en[error.code];
  if (!format) return error.message;
  const numberFormat = new Intl.NumberFormat(lang);
  return format({
    ...error.vars,
    value: error.value,
    label: fieldLabel(lang, error.field),
    num: (n) => numberFormat.format(n),
    iso: iso || ((n) => String(n)),
    u64: (1n << 64n) - 1n,
    unit: translate(lang, unit === 's' ? 'unit.s' : 'unit.ms'),
  });
}

// Every word of the page, in English and German (lang-en.js, lang-de.js),
// and the messages for the mistakes the page finds itself (a time it cannot
// read, too many lines), which name the field as its label does. The core's
// errors are shown in the core's words, as the command and the API say
// them. Keys ending in "body" or "footer" hold trusted markup and are set as
// HTML.
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
 * A mistake the page found (errors.js, PageError) in the page's language.
 * `unit` is "milliseconds" or "seconds" in words.
 */
export function errorMessage(lang, error, { unit = 'ms' } = {}) {
  const words = MESSAGES[lang] || MESSAGES.en;
  const format = words[error.code] || MESSAGES.en[error.code];
  if (!format) return error.message;
  const numberFormat = new Intl.NumberFormat(lang);
  return format({
    ...error.vars,
    value: error.value,
    label: fieldLabel(lang, error.field),
    num: (n) => numberFormat.format(n),
    unit: translate(lang, unit === 's' ? 'unit.s' : 'unit.ms'),
  });
}

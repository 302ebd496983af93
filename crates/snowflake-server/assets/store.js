// What the page remembers between visits, in localStorage under one key each.
// Storage can be off (a private window, a policy): then the page still
// works, and forgets.

const KEYS = Object.freeze({ lang: 'snowflake.lang', theme: 'snowflake.theme', zone: 'snowflake.zone', unit: 'snowflake.unit' });

/** The remembered value of `lang`, `theme`, `zone` or `unit`, or null. */
export function recall(name) {
  try {
    return localStorage.getItem(KEYS[name]);
  } catch {
    return null;
  }
}

/** Remembers a value; when storage is off it is applied but not kept. */
export function remember(name, value) {
  try {
    localStorage.setItem(KEYS[name], value);
  } catch {
    // not remembered, but applied
  }
}

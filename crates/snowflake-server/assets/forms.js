// The text forms an ID is typed and written in, from the core's list, so
// that a form the core gains shows up here without a word of this file
// changed: `auto` (decimal or 0x hexadecimal, as the core's one ID parser
// reads an ID), then every form by name.
import { textForms } from './snowflake.js';
import { STRINGS } from './strings.js';
import { el } from './dom.js';

export const AUTO = 'auto';

/** `auto`, then the core's forms in its order. */
export function formNames() {
  return [AUTO, ...textForms()];
}

/** A form in the page's words where it has them, else by its name. */
export function formLabel(prefs, name) {
  const key = name === AUTO ? 'decode.auto' : `form.${name}`;
  return key in STRINGS.en ? prefs.t(key) : name;
}

/** Fills a select with the forms, keeping the one chosen. */
export function formOptions(prefs, select) {
  const names = formNames();
  const chosen = names.includes(select.value) ? select.value : AUTO;
  select.replaceChildren(...names.map((name) => el('option', { value: name, text: formLabel(prefs, name) })));
  select.value = chosen;
}

/** An ID written as a form writes it; `auto` writes decimal, as the command does. */
export function idInForm(id, form, toText) {
  return form === AUTO ? toText(id) : toText(id, form);
}

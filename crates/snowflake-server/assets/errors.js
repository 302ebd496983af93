// A message box beside an input. It shows an error of the core (a
// SnowflakeError, in the core's words, as the command and the API say it), a
// mistake the page finds itself (a PageError, in the page's language), a
// message key or a `{ message }`; marks its input invalid for assistive
// technology while it shows; and words the message again when the language
// changes.
import { byId } from './dom.js';

/**
 * A mistake the page finds before the core sees the input: a time it cannot
 * read in the chosen zone and unit, too many lines. `code` says which
 * (strings.js words it), `field` the input at fault, `value` the text at
 * fault, `vars` whatever else the message needs.
 */
export class PageError extends Error {
  constructor(code, field, value, vars = {}) {
    super(`${code}: ${field} ${value}`);
    this.name = 'PageError';
    this.code = code;
    this.field = field;
    this.value = String(value);
    this.vars = vars;
  }
}

export class ErrorBox {
  /** `node` is the box (a hidden <p class="error">), `control` the input it belongs to. */
  constructor(prefs, node, control = null) {
    this.prefs = prefs;
    this.node = node;
    this.control = control;
    this.error = null;
  }

  show(error) {
    this.error = error;
    this.node.textContent = this.prefs.message(error);
    this.node.hidden = false;
    if (this.control) this.control.setAttribute('aria-invalid', 'true');
  }

  clear() {
    this.error = null;
    this.node.textContent = '';
    this.node.hidden = true;
    if (this.control) this.control.removeAttribute('aria-invalid');
  }

  get shown() {
    return this.error !== null;
  }

  relabel() {
    if (this.error !== null) this.node.textContent = this.prefs.message(this.error);
  }
}

/** The box of an input: the element whose id is the input's and `-error`. */
export function errorBox(prefs, input) {
  return new ErrorBox(prefs, byId(`${input.id}-error`), input);
}

/** The boxes of a panel's inputs, by the names its nodes have. */
export function errorBoxes(prefs, $, names) {
  return Object.fromEntries(names.map((name) => [name, errorBox(prefs, $[name])]));
}

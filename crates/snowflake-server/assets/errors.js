// A message box beside an input. It shows an engine error, a message key or
// a `{ message }` in the page's language, marks its input invalid for
// assistive technology while it shows, and words the message again when the
// language changes.

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

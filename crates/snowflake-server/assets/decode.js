// Decode: an ID typed in one of its text forms, read under the layout in use.
// The panel owns its input and its error; the format it names is also the
// one bulk decode reads.
import { decode, fromText } from './snowflake.js';
import { nodes, whenSubmitted } from './dom.js';
import { formOptions } from './forms.js';
import { errorBox } from './errors.js';

export class DecodePanel {
  constructor(prefs, { onDecode }) {
    this.$ = nodes('decode', ['form', 'input', 'format']);
    this.prefs = prefs;
    formOptions(prefs, this.$.format);
    this.error = errorBox(prefs, this.$.input);
    this.$.input.addEventListener('input', () => {
      if (this.text() === '') this.error.clear();
      else onDecode();
    });
    this.$.format.addEventListener('change', () => {
      if (this.text() !== '') onDecode();
    });
    whenSubmitted(this.$.form, onDecode);
  }

  text() {
    return this.$.input.value.trim();
  }

  /** The form IDs are typed in: auto (decimal or 0x hex) or one of the core's text forms. */
  format() {
    return this.$.format.value;
  }

  hasErrors() {
    return this.error.shown;
  }

  clearError() {
    this.error.clear();
  }

  /**
   * The typed ID under `layout`: `{ id, decoded }`, or `{ id, decoded: null }`
   * with the mistake marked (`id` is null when the text is no ID at all).
   */
  decode(layout) {
    this.error.clear();
    let id = null;
    try {
      id = fromText(this.text(), this.format());
      return { id, decoded: decode(id, layout) };
    } catch (error) {
      this.error.show(error);
      return { id, decoded: null };
    }
  }

  /** Puts an ID (decimal) into the input, as if typed. */
  set(id) {
    this.$.format.value = 'auto';
    this.$.input.value = id;
  }

  relabel() {
    formOptions(this.prefs, this.$.format);
    this.error.relabel();
  }
}

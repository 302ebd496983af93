// Compose: a time and a value for each field of the layout make an ID. The
// panel owns its inputs, one per field of the layout in use (values of fields
// with the same name carry over to the next layout), and what Undo puts back
// after a decoded ID was loaded into them.
import { compose, decode, formatTime, parseValue, timeUnits } from './snowflake.js';
import { fieldLabel } from './strings.js';
import { el, nodes, whenSubmitted } from './dom.js';
import { parseTime, unixText } from './time.js';
import { ErrorBox, PageError, errorBox } from './errors.js';
import { segmentKind } from './result.js';

export class ComposePanel {
  constructor(prefs, { onSubmit }) {
    this.prefs = prefs;
    this.$ = nodes('compose', ['form', 'grid', 'timestamp', 'timestampLabel', 'timestampHint']);
    this.timestampError = errorBox(prefs, this.$.timestamp);
    this.layout = null; // null while a custom spec does not parse
    this.fields = new Map(); // field name -> { field, box, input, label, hint, error }
    this.shownSpec = null; // the spec whose fields are shown
    this.undoState = null;
    this.$.grid.addEventListener('input', (event) => {
      if (event.target.matches('input')) onSubmit();
    });
    whenSubmitted(this.$.form, onSubmit);
  }

  hasErrors() {
    return this.timestampError.shown || [...this.fields.values()].some((f) => f.error.shown);
  }

  /**
   * The ID the inputs make: `{ decoded, composedFrom }`, or null with every
   * mistake marked beside its own input. An empty time means now.
   */
  compose() {
    this.timestampError.clear();
    for (const f of this.fields.values()) f.error.clear();
    const { layout } = this;
    if (!layout) return null;
    const timeText = this.$.timestamp.value.trim();
    let ts = timeText === '' ? BigInt(Date.now()) : parseTime(timeText, this.prefs.unit(), this.prefs.zone());
    let failed = false;
    if (ts === null) {
      this.timestampError.show(new PageError('timestamp.notATime', 'timestamp', timeText));
      failed = true;
    } else {
      try {
        timeUnits(layout, ts);
      } catch (error) {
        this.timestampError.show(error);
        failed = true;
      }
    }
    // Every field is checked, so that each mistake shows beside its own input.
    const values = {};
    for (const f of layout.fields) {
      const { input, error } = this.fields.get(f.name);
      const text = input.value.trim();
      try {
        values[f.name] = text === '' ? 0n : parseValue(layout, f.name, text);
      } catch (mistake) {
        error.show(mistake);
        failed = true;
      }
    }
    if (failed) return null;
    const decoded = decode(compose({ timestamp: ts, fields: values }, layout), layout);
    // Floored to the tick, so that the share link reproduces the same ID.
    return { decoded, composedFrom: { ts: BigInt(decoded.timestamp_ms), values } };
  }

  /**
   * Shows a layout: its time hint, and its fields when they differ from the
   * ones shown (or when `values` are given). While a custom spec is being
   * typed and does not parse, the inputs stay as they were, values and all.
   */
  setLayout(layout, values = null) {
    this.layout = layout;
    this.relabelTime();
    if (layout && (values || this.shownSpec !== layout.spec)) this.renderFields(values);
  }

  // One labelled input per field, after the timestamp; none without a layout.
  renderFields(values) {
    const carried = values || this.texts();
    for (const f of this.fields.values()) f.box.remove();
    this.fields.clear();
    this.shownSpec = this.layout ? this.layout.spec : null;
    if (!this.layout) return;
    for (const f of this.layout.fields) {
      // Ids apart from the panel's own: a custom field may be called `form`.
      const id = `compose-field-${f.name}`;
      const input = el('input', {
        id,
        name: f.name,
        type: 'text',
        inputmode: 'numeric',
        autocomplete: 'off',
        spellcheck: 'false',
        placeholder: '0',
        'aria-describedby': `${id}-hint ${id}-error`,
      });
      input.value = carried[f.name] ?? '';
      const label = el('span', { className: 'field-label' });
      const hint = el('p', { id: `${id}-hint`, className: 'hint' });
      const errorNode = el('p', { id: `${id}-error`, className: 'error', hidden: '' });
      const box = el('div', { className: 'field', 'data-field': f.name }, [
        el('label', { for: id }, [el('span', { className: `swatch ${segmentKind(this.layout, f.name)}`, 'aria-hidden': 'true' }), label]),
        input,
        hint,
        errorNode,
      ]);
      this.fields.set(f.name, { field: f, box, input, label, hint, error: new ErrorBox(this.prefs, errorNode, input) });
      this.$.grid.append(box);
    }
    this.relabelFields();
  }

  relabelFields() {
    for (const { field, label, hint, error } of this.fields.values()) {
      label.textContent = fieldLabel(this.prefs.lang, field.name);
      hint.textContent = this.prefs.t('field.range', { min: 0, max: this.prefs.num(field.max), bits: this.prefs.bits(field.bits) });
      error.relabel();
    }
  }

  relabelTime() {
    const { prefs, layout } = this;
    this.$.timestampLabel.textContent = prefs.t(`timestamp.label.${prefs.unit()}`);
    this.$.timestampHint.textContent = layout
      ? prefs.t('timestamp.hint', { unit: prefs.unitWord(), from: formatTime(layout.epochMs).slice(0, 10), to: formatTime(layout.lastMs).slice(0, 10) })
      : '';
  }

  relabel() {
    this.relabelTime();
    this.relabelFields();
    this.timestampError.relabel();
  }

  /** The field inputs as typed, by field name. */
  texts() {
    return Object.fromEntries([...this.fields].map(([name, f]) => [name, f.input.value]));
  }

  /** A whole number typed in the unit before is carried over into the unit now. */
  convertUnit(from) {
    const typed = this.$.timestamp.value.trim();
    const ms = parseTime(typed, from, this.prefs.zone());
    if (ms !== null && /^-?[0-9.]+$/.test(typed)) this.$.timestamp.value = unixText(ms, this.prefs.unit());
  }

  /** Fills in the inputs a link gives: ?timestamp=…&<field>=…, the time in ms whatever the unit. */
  restore(query) {
    const values = {};
    if (this.layout) for (const f of this.layout.fields) if (query.has(f.name)) values[f.name] = query.get(f.name);
    this.renderFields(values);
    const ts = query.get('timestamp');
    this.$.timestamp.value = ts && this.prefs.unit() === 's' && /^\d+$/.test(ts) ? unixText(BigInt(ts), 's') : ts || '';
  }

  /** Loads a decoded ID's parts, keeping what was typed (and the layout's inputs) for Undo. */
  load(decoded, layoutInputs) {
    this.undoState = { layoutInputs, timestamp: this.$.timestamp.value, values: this.texts() };
    this.$.timestamp.value = unixText(BigInt(decoded.timestamp_ms), this.prefs.unit());
    this.renderFields(Object.fromEntries(Object.entries(decoded.fields).map(([n, v]) => [n, v.toString()])));
  }

  focus() {
    this.$.timestamp.focus();
  }

  get canUndo() {
    return this.undoState !== null;
  }

  /** Takes back what load() kept: the layout's inputs, for the page to restore first. */
  takeUndo() {
    const saved = this.undoState;
    this.undoState = null;
    return saved;
  }

  /** Puts back the time and values that takeUndo() returned, under the layout restored. */
  putBack(saved, layout) {
    this.$.timestamp.value = saved.timestamp;
    this.layout = layout;
    this.relabelTime();
    this.renderFields(saved.values);
  }
}

// Unmask: a key pasted into the page turns masked IDs back into the IDs
// they hide, or masks IDs, as `snowflake unmask` and `mask` do, under the
// layout in use: the masking crate itself, compiled into the page's module,
// in this browser, from a saved file too. The panel owns the key's input
// and the rows on screen.
//
// The key goes nowhere but into the module, which wipes its text as soon as
// it holds the key and drops the key when the rows are done: its input has
// no name (a form would not send it) and no autocomplete, nothing here
// writes it to storage, a link or a message, and Forget empties the input
// and the rows.
import { Masker, SnowflakeError, checkMaskable, decode, toText } from './snowflake.js';
import { readIds } from './many.js';
import { formNames, formOptions, idInForm } from './forms.js';
import { rowsCsv, rowsSummary, rowsTable } from './rows.js';
import { el, nodes, whenSubmitted } from './dom.js';
import { ErrorBox, errorBoxes } from './errors.js';

/** The two ways an ID can go; `unmask` gives back what `mask` hid. */
const WAYS = ['unmask', 'mask'];

export class UnmaskPanel {
  /** `layout()` is the layout in use, or null; `onDecode(id, layoutName)` shows an ID's breakdown. */
  constructor(prefs, copier, { layout, onDecode }) {
    this.prefs = prefs;
    this.layout = layout;
    this.$ = nodes('unmask', [
      'form', 'key', 'inputLabel', 'input', 'format', 'inputHint', 'layoutError',
      'submit', 'copy', 'forget', 'summary', 'box', 'table',
    ]);
    this.ways = [...this.$.form.querySelectorAll('input[name="unmask-way"]')];
    // The layout's box belongs to no input: it says when the layout in use cannot be masked.
    this.errors = { ...errorBoxes(prefs, this.$, ['key', 'input']), layout: new ErrorBox(prefs, this.$.layoutError) };
    this.rows = null;
    this.shown = null; // { way, format, layout } of the rows on screen
    formOptions(prefs, this.$.format);
    whenSubmitted(this.$.form, () => this.go());
    this.$.key.addEventListener('input', () => this.errors.key.clear());
    for (const radio of this.ways) radio.addEventListener('change', () => this.relabel());
    this.$.forget.addEventListener('click', () => this.forget());
    this.$.copy.addEventListener('click', () => copier.copyCsv(this.csv(), this.$.summary));
    this.$.table.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-id]');
      if (button && this.shown) onDecode(button.dataset.id, this.shown.layout.name);
    });
  }

  /** Which way the IDs go: 'unmask' or 'mask'. */
  way() {
    const checked = this.ways.find((radio) => radio.checked);
    return checked && WAYS.includes(checked.value) ? checked.value : WAYS[0];
  }

  /** Reads the key and the IDs, and masks or unmasks every line; each mistake is marked beside its input. */
  go() {
    for (const box of Object.values(this.errors)) box.clear();
    this.show(null);
    const layout = this.layout();
    if (!layout) return;
    const way = this.way();
    const format = formNames().includes(this.$.format.value) ? this.$.format.value : formNames()[0];
    // Each mistake beside its own input: the layout too narrow for FF1,
    // and the key's text.
    let masker = null;
    try {
      checkMaskable(layout);
    } catch (error) {
      this.errors.layout.show(error);
    }
    try {
      masker = new Masker(this.$.key.value, layout);
    } catch (error) {
      if (!(error instanceof SnowflakeError)) throw error;
      if (error.field === 'key') this.errors.key.show(error);
    }
    if (!masker) return;
    try {
      const rows = this.many(masker, way, this.$.input.value, format);
      if (rows.length === 0) this.errors.input.show('bulk.empty');
      else this.show(rows, { way, format, layout });
    } catch (error) {
      this.errors.input.show(error);
    } finally {
      masker.free();
    }
  }

  /**
   * Pasted IDs, one a line, masked or unmasked (`way`): a row for each line
   * that is not blank, `{ line, input, id, output, decoded, error }`, where
   * `id` is the ID read from the line, `output` the ID it became and
   * `decoded` the breakdown of the plain one of the two (the output when
   * unmasking, the input when masking). A bad line gets its error and the
   * rest go on.
   */
  many(masker, way, text, format) {
    return readIds(text, format).map((row) => {
      const done = { ...row, output: null, decoded: null };
      if (row.error) return done;
      try {
        done.output = way === 'mask' ? masker.mask(row.id) : masker.unmask(row.id);
        done.decoded = decode(way === 'mask' ? row.id : done.output, masker.layout);
      } catch (error) {
        if (!(error instanceof SnowflakeError)) throw error;
        done.error = error;
      }
      return done;
    });
  }

  show(rows, shown = null) {
    this.rows = rows;
    this.shown = shown;
    this.render();
  }

  /** Empties the key's input and the rows it made. */
  forget() {
    this.$.key.value = '';
    this.errors.key.clear();
    this.show(null);
    this.$.summary.textContent = this.prefs.t('unmask.forgotten');
    this.$.key.focus();
  }

  // What each line became, written as the lines were (decimal for `auto`).
  output() {
    const { way, format } = this.shown;
    return { name: way === 'mask' ? 'masked' : 'id', head: `unmask.output.${way}`, text: (row) => idInForm(row.output, format, toText) };
  }

  render() {
    const { rows, prefs, $ } = this;
    $.copy.hidden = !rows;
    if (!rows) {
      $.summary.textContent = '';
      $.box.hidden = true;
      $.table.replaceChildren();
      return;
    }
    const { way } = this.shown;
    $.summary.textContent = rowsSummary(prefs, rows, { summary: `unmask.summary.${way}`, summaryOk: `unmask.summaryOk.${way}` });
    const action = {
      head: 'unmask.action',
      cell: (row) => {
        const id = row.decoded.id;
        return el('button', { type: 'button', className: 'link-button', 'data-id': id, 'aria-label': prefs.t('generate.decodeLabel', { id }), text: prefs.t('generate.decode') });
      },
    };
    $.table.replaceChildren(...rowsTable(prefs, rows, { caption: `unmask.caption.${way}`, input: `unmask.input.${way}`, output: this.output(), action }));
    $.box.hidden = false;
  }

  /** Every row as CSV (rows.js). */
  csv() {
    return rowsCsv(this.prefs, this.rows || [], this.output());
  }

  relabel() {
    const { prefs, $ } = this;
    const way = this.way();
    formOptions(prefs, $.format);
    $.inputLabel.textContent = prefs.t(`unmask.label.${way}`);
    $.submit.textContent = prefs.t(`unmask.submit.${way}`);
    this.relabelLayout();
    for (const box of Object.values(this.errors)) box.relabel();
    this.render();
  }

  /** The hint names the layout the IDs are read with; the page calls this when it changes. */
  relabelLayout() {
    const layout = this.layout();
    this.$.inputHint.textContent = layout ? this.prefs.t('unmask.hint', { layout: layout.name, bits: this.prefs.bits(layout.bits) }) : '';
  }
}

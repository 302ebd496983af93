// Decode many IDs: one a line, under the layout in use and in the format the
// Decode panel names. Bad lines are marked in place; the table shows the
// first rows, the CSV (copied or downloaded) has them all. The panel owns
// the rows on screen.
import { decodeMany } from './many.js';
import { rowsCsv, rowsSummary, rowsTable } from './rows.js';
import { el, nodes, whenSubmitted } from './dom.js';
import { errorBox } from './errors.js';

// Each line's ID, in decimal.
const ID_COLUMN = { name: 'id', head: 'result.id', text: (row) => row.decoded.id };

export class BulkPanel {
  /** `layout()` is the layout in use, or null; `format()` the form IDs are typed in. */
  constructor(prefs, copier, { layout, format }) {
    this.prefs = prefs;
    this.copier = copier;
    this.layout = layout;
    this.format = format;
    this.$ = nodes('bulk', ['form', 'input', 'summary', 'box', 'table', 'copy', 'download']);
    this.error = errorBox(prefs, this.$.input);
    this.rows = null;
    this.decodedWith = null; // the layout of the rows, which names the CSV file
    whenSubmitted(this.$.form, () => this.decodeAll());
    this.$.copy.addEventListener('click', () => copier.copyCsv(this.csv(), this.$.summary));
    this.$.download.addEventListener('click', () => this.download());
  }

  decodeAll() {
    this.error.clear();
    this.rows = null;
    this.$.summary.textContent = '';
    const layout = this.layout();
    if (!layout) return;
    this.decodedWith = layout;
    try {
      this.rows = decodeMany(layout, this.$.input.value, this.format());
    } catch (error) {
      this.error.show(error);
    }
    if (this.rows && this.rows.length === 0) {
      this.rows = null;
      this.error.show('bulk.empty');
    }
    this.render();
  }

  render() {
    const { rows, prefs, $ } = this;
    $.copy.hidden = !rows;
    $.download.hidden = !rows;
    if (!rows) {
      $.box.hidden = true;
      $.table.replaceChildren();
      return;
    }
    $.summary.textContent = rowsSummary(prefs, rows, { summary: 'bulk.summary', summaryOk: 'bulk.summaryOk' });
    $.table.replaceChildren(...rowsTable(prefs, rows, { caption: 'bulk.caption', input: 'bulk.input', output: ID_COLUMN }));
    $.box.hidden = false;
  }

  /** Every row as CSV (rows.js). */
  csv() {
    return rowsCsv(this.prefs, this.rows || [], ID_COLUMN);
  }

  download() {
    const url = URL.createObjectURL(new Blob([this.csv()], { type: 'text/csv;charset=utf-8' }));
    const name = this.decodedWith.name.replace(/[^a-z0-9]+/gi, '-');
    const link = el('a', { href: url, download: `snowflake-${name}.csv`, className: 'offscreen' });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  relabel() {
    this.error.relabel();
    this.render();
  }
}

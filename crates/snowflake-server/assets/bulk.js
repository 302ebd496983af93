// Decode many IDs: one a line, under the layout in use and in the format the
// Decode panel names. Bad lines are marked in place; the table shows the
// first rows, the CSV (copied or downloaded) has them all. The panel owns
// the rows on screen.
import { isoOf, layoutName } from './engine.js';
import { decodeMany, csvText } from './many.js';
import { fieldLabel } from './strings.js';
import { el, nodes } from './dom.js';
import { ErrorBox } from './errors.js';

// More rows than this make the table slow to draw; the CSV keeps them all.
const TABLE_ROWS = 2000;

export class BulkPanel {
  /** `layout()` is the layout in use, or null; `format()` the form IDs are typed in. */
  constructor(prefs, copier, { layout, format }) {
    this.prefs = prefs;
    this.copier = copier;
    this.layout = layout;
    this.format = format;
    this.$ = nodes({
      form: 'bulk-form',
      input: 'bulk-input',
      summary: 'bulk-summary',
      box: 'bulk-box',
      table: 'bulk-table',
      copy: 'bulk-copy',
      download: 'bulk-download',
      error: 'error-bulk-input',
    });
    this.error = new ErrorBox(prefs, this.$.error, this.$.input);
    this.rows = null;
    this.decodedWith = null; // the layout of the rows, which names the CSV file
    this.$.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.decodeAll();
    });
    this.$.copy.addEventListener('click', async () => {
      const copied = await copier.copyText(this.csv());
      this.$.summary.textContent = prefs.t(copied ? 'copy.done' : 'copy.failed', { what: 'CSV' });
    });
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

  // The field columns: those of the layout the rows were decoded with.
  columns() {
    const first = (this.rows || []).find((r) => r.decoded);
    return first ? first.decoded.fields.map(([name]) => name) : [];
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
    const fields = this.columns();
    const bad = rows.filter((r) => r.error).length;
    const summary = bad
      ? prefs.t('bulk.summary', { ok: prefs.num(rows.length - bad), total: prefs.num(rows.length), bad: prefs.num(bad) })
      : prefs.t('bulk.summaryOk', { total: prefs.num(rows.length) });
    $.summary.textContent = rows.length > TABLE_ROWS ? `${summary} ${prefs.t('bulk.shown', { shown: prefs.num(TABLE_ROWS), total: prefs.num(rows.length) })}` : summary;
    const head = el('thead', {}, [
      el('tr', {}, [
        el('th', { scope: 'col', text: prefs.t('bulk.line') }),
        el('th', { scope: 'col', text: prefs.t('bulk.input') }),
        el('th', { scope: 'col', text: prefs.t('result.id') }),
        el('th', { scope: 'col', text: `${prefs.t('result.time')} (UTC)` }),
        ...fields.map((name) => el('th', { scope: 'col', text: fieldLabel(prefs.lang, name) })),
        el('th', { scope: 'col', text: prefs.t('bulk.error') }),
      ]),
    ]);
    const body = el('tbody');
    for (const row of rows.slice(0, TABLE_ROWS)) {
      const values = row.decoded ? Object.fromEntries(row.decoded.fields.map(([n, v]) => [n, v.toString()])) : {};
      body.append(
        el('tr', { className: row.error ? 'bad-row' : null, 'data-line': String(row.line) }, [
          el('td', { text: String(row.line) }),
          el('td', {}, [el('code', { text: row.input })]),
          el('td', {}, [el('code', { text: row.decoded ? row.decoded.id.toString() : '' })]),
          el('td', {}, [el('code', { text: row.decoded ? isoOf(row.decoded.timestampMs) : '' })]),
          ...fields.map((name) => el('td', { text: values[name] ?? '' })),
          el('td', { className: row.error ? 'row-error' : null, text: row.error ? prefs.message(row.error) : '' }),
        ]),
      );
    }
    $.table.replaceChildren(el('caption', { className: 'sr-only', text: prefs.t('bulk.caption') }), head, body);
    $.box.hidden = false;
  }

  /** Every row as CSV, cells a spreadsheet would run as formulas defused (many.js). */
  csv() {
    const fields = this.columns();
    const lines = [['line', 'input', 'id', 'timestamp_ms', 'time', ...fields, 'error']];
    for (const row of this.rows || []) {
      const d = row.decoded;
      const values = d ? Object.fromEntries(d.fields.map(([n, v]) => [n, v.toString()])) : {};
      lines.push([row.line, row.input, d ? d.id : '', d ? d.timestampMs : '', d ? isoOf(d.timestampMs) : '', ...fields.map((n) => values[n] ?? ''), row.error ? this.prefs.message(row.error) : '']);
    }
    return csvText(lines);
  }

  download() {
    const url = URL.createObjectURL(new Blob([this.csv()], { type: 'text/csv;charset=utf-8' }));
    const name = layoutName(this.decodedWith).replace(/[^a-z0-9]+/gi, '-');
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

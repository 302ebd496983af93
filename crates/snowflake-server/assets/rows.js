// Rows read from pasted lines, as a table on screen and as CSV: bulk decode
// and unmask show theirs alike. A row is `{ line, input, decoded, error }`
// plus whatever its `output` column reads: the line's number, what was
// typed, what it became, then the time and fields of `decoded`, and the
// problem of a bad line.
import { csvText } from './many.js';
import { fieldLabel } from './strings.js';
import { el } from './dom.js';

// More rows than this make the table slow to draw; the CSV keeps them all.
export const TABLE_ROWS = 2000;

/** The field columns: those of the layout the rows were decoded with. */
function fieldNames(rows) {
  const first = rows.find((r) => r.decoded);
  return first ? Object.keys(first.decoded.fields) : [];
}

function fieldValues(decoded) {
  return decoded ? Object.fromEntries(Object.entries(decoded.fields).map(([n, v]) => [n, v.toString()])) : {};
}

/** The summary above the rows: how many went through, and how many the table shows. */
export function rowsSummary(prefs, rows, { summary, summaryOk }) {
  const bad = rows.filter((r) => r.error).length;
  const said = bad
    ? prefs.t(summary, { ok: prefs.num(rows.length - bad), total: prefs.num(rows.length), bad: prefs.num(bad) })
    : prefs.t(summaryOk, { total: prefs.num(rows.length) });
  return rows.length > TABLE_ROWS ? `${said} ${prefs.t('bulk.shown', { shown: prefs.num(TABLE_ROWS), total: prefs.num(rows.length) })}` : said;
}

/**
 * The table's caption, head and body for the first TABLE_ROWS rows.
 * `caption` and `input` are string keys; `output` is `{ head, text(row) }`
 * for the column of what each line became; `action`, `{ head, cell(row) }`
 * when given, adds a column after it with what `cell` returns for a good
 * row (a button), under a heading for assistive technology alone.
 */
export function rowsTable(prefs, rows, { caption, input, output, action = null }) {
  const fields = fieldNames(rows);
  const head = el('thead', {}, [
    el('tr', {}, [
      el('th', { scope: 'col', text: prefs.t('bulk.line') }),
      el('th', { scope: 'col', text: prefs.t(input) }),
      el('th', { scope: 'col', text: prefs.t(output.head) }),
      ...(action ? [el('th', { scope: 'col' }, [el('span', { className: 'sr-only', text: prefs.t(action.head) })])] : []),
      el('th', { scope: 'col', text: `${prefs.t('result.time')} (UTC)` }),
      ...fields.map((name) => el('th', { scope: 'col', text: fieldLabel(prefs.lang, name) })),
      el('th', { scope: 'col', text: prefs.t('bulk.error') }),
    ]),
  ]);
  const body = el('tbody');
  // A bad line has nothing to show in the columns between its input and
  // its problem: the problem takes their room, so it reads as a sentence.
  const between = 2 + (action ? 1 : 0) + fields.length;
  for (const row of rows.slice(0, TABLE_ROWS)) {
    const line = el('td', { text: String(row.line) });
    const input = el('td', {}, [el('code', { text: row.input })]);
    if (row.error) {
      body.append(
        el('tr', { className: 'bad-row', 'data-line': String(row.line) }, [
          line,
          input,
          el('td', { className: 'row-error', colspan: String(between + 1), text: prefs.message(row.error) }),
        ]),
      );
      continue;
    }
    const values = fieldValues(row.decoded);
    body.append(
      el('tr', { 'data-line': String(row.line) }, [
        line,
        input,
        el('td', {}, [el('code', { text: output.text(row) })]),
        ...(action ? [el('td', {}, [action.cell(row)])] : []),
        el('td', {}, [el('code', { text: row.decoded.time })]),
        ...fields.map((name) => el('td', { text: values[name] ?? '' })),
        el('td', {}),
      ]),
    );
  }
  return [el('caption', { className: 'sr-only', text: prefs.t(caption) }), head, body];
}

/**
 * Every row as CSV: line, input, the output column (`output.name`),
 * timestamp_ms, time, the fields and the error, cells a spreadsheet would
 * run as formulas defused (many.js).
 */
export function rowsCsv(prefs, rows, output) {
  const fields = fieldNames(rows);
  const lines = [['line', 'input', output.name, 'timestamp_ms', 'time', ...fields, 'error']];
  for (const row of rows) {
    const d = row.decoded;
    const values = fieldValues(d);
    lines.push([row.line, row.input, row.error ? '' : output.text(row), d ? d.timestamp_ms : '', d ? d.time : '', ...fields.map((n) => values[n] ?? ''), row.error ? prefs.message(row.error) : '']);
  }
  return csvText(lines);
}

// Many IDs at once: decoding a pasted list line by line, and the rows as
// CSV for a spreadsheet.
import { EngineError, decode } from './engine.js';
import { parseId } from './idtext.js';

export const BULK_LIMIT = 10000;

/**
 * Decodes one ID a line. Blank lines are skipped; a bad line becomes an error
 * row in its place and the rest go on. More than BULK_LIMIT IDs is refused.
 */
export function decodeMany(layout, text, format = 'auto') {
  const lines = text.split(/\r?\n/);
  const rows = [];
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const row = { line: i + 1, input: trimmed, decoded: null, error: null };
    try {
      row.decoded = decode(layout, parseId(trimmed, format));
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      row.error = error;
    }
    rows.push(row);
  });
  if (rows.length > BULK_LIMIT) throw new EngineError('bulk.tooMany', 'bulk', String(rows.length), { limit: BigInt(BULK_LIMIT) });
  return rows;
}

// A spreadsheet reads a cell that begins with one of these as a formula
// (a tab or carriage return first hides the one after it), so `=1+1` or
// `+cmd|'/c calc'!A0` pasted into the list would run when the CSV is opened.
// OWASP's rule, the same as the CLI's and the API's CSV: such a cell gets a
// single quote in front, which makes it text, and is always quoted.
const FORMULA_START = /^[=+\-@\t\r]/;

/** A CSV field: quoted when it must be (RFC 4180), defused when it would be a formula. */
export function csvField(value) {
  const s = String(value);
  const quoted = s.replace(/"/g, '""');
  if (FORMULA_START.test(s)) return `"'${quoted}"`;
  return /[",\r\n]/.test(s) ? `"${quoted}"` : s;
}

/** Rows of cells as CSV text, each line ended by CRLF (RFC 4180). */
export function csvText(rows) {
  return rows.map((cells) => `${cells.map(csvField).join(',')}\r\n`).join('');
}

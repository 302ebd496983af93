// Many IDs at once: reading a pasted list line by line, decoding it, and
// rows as CSV for a spreadsheet.
import { SnowflakeError, decode, fromText } from './snowflake.js';
import { PageError } from './errors.js';

export const BULK_LIMIT = 10000;

/**
 * The IDs of pasted text, one a line: `{ line, input, id, error }` for each
 * line that is not blank, where `id` is null and `error` says why when the
 * line is no ID. More than BULK_LIMIT lines is refused.
 */
export function readIds(text, format = 'auto') {
  const rows = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const row = { line: i + 1, input: trimmed, id: null, error: null };
    try {
      row.id = fromText(trimmed, format);
    } catch (error) {
      if (!(error instanceof SnowflakeError)) throw error;
      row.error = error;
    }
    rows.push(row);
  });
  if (rows.length > BULK_LIMIT) throw new PageError('bulk.tooMany', 'bulk', String(rows.length), { limit: BigInt(BULK_LIMIT) });
  return rows;
}

/**
 * Decodes one ID a line. Blank lines are skipped; a bad line becomes an error
 * row in its place and the rest go on. More than BULK_LIMIT IDs is refused.
 */
export function decodeMany(layout, text, format = 'auto') {
  return readIds(text, format).map(({ line, input, id, error }) => {
    const row = { line, input, decoded: null, error };
    if (error) return row;
    try {
      row.decoded = decode(id, layout);
    } catch (mistake) {
      if (!(mistake instanceof SnowflakeError)) throw mistake;
      row.error = mistake;
    }
    return row;
  });
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

//! The record writers: one decoded ID, or one error record, at a time, as
//! JSON, NDJSON or CSV, buffered so that the writer needs no buffer of its
//! own.

use std::io::{self, Write};

use serde::Serialize;
use snowflake::{Decoded, Error, Id, Layout, TextForm, UnixMillis};

/// Room for a CSV row's fixed columns at their longest: line, id, sign,
/// timestamp, time and four commas (each field adds its number and one).
const ROW_FIXED: usize = 3 * TextForm::MAX_LEN + 1 + UnixMillis::MAX_LEN + 4;

/// Records are handed to the writer in pieces of about this size.
const FLUSH_AT: usize = 1 << 16;

/// How records are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON array of records.
    Json,
    /// One JSON record per line.
    Ndjson,
    /// A header row, then one row per ID.
    Csv,
}

/// An ID that could not be decoded, as the JSON forms write it.
#[derive(Debug, Serialize)]
pub struct BadRecord<'a> {
    /// The 1-based line of a text input, or position in a JSON array.
    pub line: u64,
    /// The text as given.
    pub input: &'a str,
    /// What is wrong, in the words `snowflake decode` uses for one ID.
    pub error: String,
    /// The input at fault: `id`, or `layout` for an ID the layout refuses.
    pub field: Option<&'a str>,
}

/// Writes records in one [`Format`], one ID at a time.
#[derive(Debug)]
pub struct Records<'l, W: Write> {
    out: W,
    layout: &'l Layout,
    format: Format,
    form: TextForm,
    written: u64,
    row: Vec<u8>,
    /// Where [`Records::csv_row`] builds one row; it grows to the longest
    /// row of the widest layout seen, once.
    scratch: Vec<u8>,
    /// Rows go to `out` once this many bytes gathered.
    flush_at: usize,
}

impl<'l, W: Write> Records<'l, W> {
    /// Starts the output: the CSV header, or the JSON array's `[`. IDs in
    /// the CSV's `id` column are written in `form` (the JSON records carry
    /// every form).
    pub fn new(out: W, layout: &'l Layout, format: Format, form: TextForm) -> io::Result<Self> {
        Records::gathering(out, layout, format, form, FLUSH_AT)
    }

    /// [`Records::new`], handing rows to `out` once `flush_at` bytes of them
    /// gathered: less than [`Records::new`]'s 64 KiB for a caller that
    /// passes them on in small pieces ([`Records::drain`]).
    pub fn gathering(
        out: W,
        layout: &'l Layout,
        format: Format,
        form: TextForm,
        flush_at: usize,
    ) -> io::Result<Self> {
        let mut records = Records {
            out,
            layout,
            format,
            form,
            written: 0,
            row: Vec::with_capacity(flush_at + 4096),
            scratch: Vec::new(),
            flush_at,
        };
        match format {
            Format::Csv => {
                let mut header = String::from("line,id,timestamp_ms,time");
                for field in layout.fields() {
                    header.push(',');
                    header.push_str(field.name());
                }
                header.push_str(",error\n");
                records.row.extend_from_slice(header.as_bytes());
            }
            Format::Json => records.row.push(b'['),
            Format::Ndjson => {}
        }
        Ok(records)
    }

    /// The layout records are decoded with.
    pub fn layout(&self) -> &'l Layout {
        self.layout
    }

    fn separate(&mut self) {
        if self.format == Format::Json && self.written > 0 {
            self.row.push(b',');
        }
        self.written += 1;
    }

    /// Writes a decoded ID.
    pub fn ok(&mut self, line: u64, decoded: &Decoded<'_>) -> io::Result<()> {
        self.separate();
        match self.format {
            Format::Json | Format::Ndjson => {
                serde_json::to_writer(&mut self.row, decoded).map_err(io::Error::from)?;
            }
            Format::Csv => {
                let start = self.csv_row(line, decoded);
                self.row.extend_from_slice(&self.scratch[start..]);
            }
        }
        if self.format != Format::Json {
            self.row.push(b'\n');
        }
        self.flush_if_full()
    }

    /// Writes an error record for an input that is not an ID.
    pub fn bad(&mut self, line: u64, input: &str, err: &Error) -> io::Result<()> {
        self.separate();
        match self.format {
            Format::Json | Format::Ndjson => {
                let record = BadRecord {
                    line,
                    input,
                    error: err.to_string(),
                    field: err.field(),
                };
                serde_json::to_writer(&mut self.row, &record).map_err(io::Error::from)?;
            }
            Format::Csv => {
                let mut num = [0u8; 20];
                self.row
                    .extend_from_slice(Id::new(line).to_decimal(&mut num).as_bytes());
                self.row.push(b',');
                csv_field(&mut self.row, input);
                self.row.extend_from_slice(b",,");
                for _ in self.layout.fields() {
                    self.row.push(b',');
                }
                self.row.push(b',');
                csv_field(&mut self.row, &err.to_string());
            }
        }
        if self.format != Format::Json {
            self.row.push(b'\n');
        }
        self.flush_if_full()
    }

    /// A decoded ID's CSV row, without its line break: the hot path of
    /// `decode --csv` over millions of IDs. It is written from its end in
    /// `scratch`, each number back to front where it ends, so that no
    /// number's length has to be known first and no `format!` runs.
    /// Returns where the row starts.
    fn csv_row(&mut self, line: u64, decoded: &Decoded<'_>) -> usize {
        // Room for the longest row of this breakdown's layout, which need
        // not be the one given to `new` (a library caller may pass another).
        let room = ROW_FIXED + decoded.layout().fields().len() * (TextForm::MAX_LEN + 1);
        if self.scratch.len() < room {
            self.scratch.resize(room, 0);
        }
        let mut back = Back {
            buf: &mut self.scratch,
            at: 0,
        };
        back.at = back.buf.len();
        let raw = decoded.id().get();
        // The error column is empty: the row ends with the comma before it.
        back.byte(b',');
        for field in decoded.layout().fields().iter().rev() {
            back.number(TextForm::Decimal, field.extract(raw));
            back.byte(b',');
        }
        let mut date = [0u8; UnixMillis::MAX_LEN];
        let len = decoded.time().write_front(&mut date);
        back.bytes(&date[..len]);
        back.byte(b',');
        let ms = decoded.timestamp_ms();
        back.number(TextForm::Decimal, ms.unsigned_abs());
        if ms < 0 {
            back.byte(b'-');
        }
        back.byte(b',');
        back.number(self.form, raw);
        back.byte(b',');
        back.number(TextForm::Decimal, line);
        back.at
    }

    /// Rows gather in one buffer that goes to the writer when it fills, so
    /// that the writer needs no buffer of its own and a row is copied once.
    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.row.len() >= self.flush_at {
            self.out.write_all(&self.row)?;
            self.row.clear();
        }
        Ok(())
    }

    /// Bytes written and not yet taken by [`Records::drain`]: at most
    /// about the `flush_at` the records were made with, plus a row.
    pub fn pending(&self) -> usize
    where
        W: AsRef<[u8]>,
    {
        self.out.as_ref().len() + self.row.len()
    }

    /// Everything written so far, taken out: the output continues where it
    /// left off.
    pub fn drain(&mut self) -> io::Result<W>
    where
        W: Default,
    {
        self.out.write_all(&self.row)?;
        self.row.clear();
        Ok(std::mem::take(&mut self.out))
    }

    /// Ends the output (the JSON array's `]`), flushes and hands the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        if self.format == Format::Json {
            self.row.push(b']');
        }
        self.out.write_all(&self.row)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A row written from its end: each piece goes just before the last.
struct Back<'b> {
    buf: &'b mut [u8],
    at: usize,
}

impl Back<'_> {
    fn byte(&mut self, byte: u8) {
        self.at -= 1;
        self.buf[self.at] = byte;
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.at -= bytes.len();
        self.buf[self.at..self.at + bytes.len()].copy_from_slice(bytes);
    }

    fn number(&mut self, form: TextForm, n: u64) {
        let slot = &mut self.buf[self.at - TextForm::MAX_LEN..self.at];
        if let Ok(slot) = slot.try_into() {
            self.at -= TextForm::MAX_LEN - form.write_back(Id::new(n), slot);
        }
    }
}

/// The characters a spreadsheet takes, at the start of a cell, as the start
/// of a formula (OWASP's list for CSV injection).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A CSV text field: quoted when it holds a comma, a quote or a line break,
/// and neutralised when it starts like a formula (`=1+1`, `@SUM(A1)`):
/// quoted, with a `'` before it, which spreadsheets show as text and do not
/// evaluate. Every cell that carries text from the input goes through here;
/// the numeric columns are the service's own numbers.
fn csv_field(row: &mut Vec<u8>, text: &str) {
    let formula = text.starts_with(FORMULA_STARTS);
    if !formula && !text.contains([',', '"', '\n', '\r']) {
        row.extend_from_slice(text.as_bytes());
        return;
    }
    row.push(b'"');
    if formula {
        row.push(b'\'');
    }
    for byte in text.bytes() {
        if byte == b'"' {
            row.push(b'"');
        }
        row.push(byte);
    }
    row.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row built from its end must come out the same as one built the
    /// plain way, for every column at its widest or strangest: a time
    /// before 1970, a year past 9999, many fields, a non-decimal `id` form,
    /// and a breakdown in a wider layout than the one the writer was made for.
    #[test]
    fn csv_rows_match_the_plain_way_at_every_edge() {
        let many = Layout::parse(
            "time:28,a:2,b:2,c:2,d:2,e:2,f:2,g:2,h:2,i:2,j:2,k:2,l:2,m:2,n:2,o:2,p:2,q:2,sequence:2",
        )
        .unwrap()
        .with_epoch_ms(-1_000_000_000_000)
        .unwrap();
        let wide = Layout::parse("time:60,sequence:3")
            .unwrap()
            .with_epoch_ms(250_000_000_000_000)
            .unwrap();
        let twitter = Layout::twitter();
        for (writer_layout, decoded_layout, form, raw) in [
            (&many, &many, TextForm::Decimal, 0u64),
            (&many, &many, TextForm::Hex, u64::MAX >> 1),
            (&wide, &wide, TextForm::Base32, u64::MAX >> 1),
            (&twitter, &many, TextForm::Base62, 12_345_678_901_234),
        ] {
            let decoded = decoded_layout.decode(Id::new(raw)).unwrap();
            let mut records = Records::new(Vec::new(), writer_layout, Format::Csv, form).unwrap();
            records.ok(7, &decoded).unwrap();
            let csv = String::from_utf8(records.finish().unwrap()).unwrap();
            let row = csv.lines().nth(1).unwrap();
            let mut expected = format!(
                "7,{},{},{}",
                Id::new(raw).to_text(form),
                decoded.timestamp_ms(),
                decoded.time()
            );
            for (_, value) in decoded.fields() {
                expected.push_str(&format!(",{value}"));
            }
            expected.push(',');
            assert_eq!(row, expected);
        }
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let mut row = Vec::new();
        csv_field(&mut row, "a,\"b\"");
        assert_eq!(row, b"\"a,\"\"b\"\"\"");
        row.clear();
        csv_field(&mut row, "plain");
        assert_eq!(row, b"plain");
    }

    /// Input a spreadsheet would run as a formula is written as text.
    #[test]
    fn csv_neutralises_what_a_spreadsheet_would_evaluate() {
        for (input, cell) in [
            ("=1+1", "\"'=1+1\""),
            ("+cmd|'/c calc'!A0", "\"'+cmd|'/c calc'!A0\""),
            ("-2+3", "\"'-2+3\""),
            ("@SUM(A1)", "\"'@SUM(A1)\""),
            ("\t=1", "\"'\t=1\""),
            ("\r=1", "\"'\r=1\""),
            (
                "=HYPERLINK(\"x\",\"y\")",
                "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"",
            ),
            ("1=1", "1=1"),
            ("0x10", "0x10"),
        ] {
            let mut row = Vec::new();
            csv_field(&mut row, input);
            assert_eq!(String::from_utf8(row).unwrap(), cell, "{input:?}");
        }
    }
}

//! Many IDs at once: the tokenizer and the record writers that `snowflake
//! decode -` and `POST /api/v1/decode` share, so that a stream on the command
//! line and a request body give the same records in the same shapes.
//!
//! Input is IDs separated by any ASCII whitespace (one per line, or several
//! on a line). Each ID becomes one record: its breakdown, or, when it is not
//! an ID, an error record naming the line, the input and what is wrong. One
//! bad ID never stops the rest.
//!
//! Records are written as:
//! - NDJSON: one breakdown (as `decode --json` prints it) per line, and
//!   `{"line","input","error","field"}` for a bad one;
//! - CSV: a header `line,id,timestamp_ms,time,<fields of the layout>,error`,
//!   then one row per ID; a bad row keeps the input in `id` and the message
//!   in `error`, the other columns empty;
//! - JSON: the NDJSON records as one array (the API's default).
//!
//! Memory stays constant however long the input: the tokenizer keeps at
//! most [`MAX_ID_LEN`] bytes of one ID, the writers one row.
//!
//! ```
//! use snowflake::{Layout, TextForm};
//! use snowflake_server::bulk::{Format, Records, decode_stream};
//!
//! let input = "4194439168 12ab\n0xfa021000\n";
//! let twitter = Layout::twitter();
//! let mut records = Records::new(Vec::new(), &twitter, Format::Csv, TextForm::Decimal)?;
//! let counts = decode_stream(input.as_bytes(), None, None, &mut records, |_, _, _| Ok(()))?;
//! assert_eq!((counts.ok, counts.bad), (2, 1));
//! let csv = String::from_utf8(records.finish()?).unwrap();
//! let mut lines = csv.lines();
//! assert_eq!(lines.next(), Some("line,id,timestamp_ms,time,datacenter,machine,sequence,error"));
//! assert_eq!(lines.next(), Some("1,4194439168,1288834975657,2010-11-04T01:42:55.657Z,1,1,0,"));
//! assert!(lines.next().unwrap().starts_with("1,12ab,,,,,,\"id \"\"12ab\"\" is not decimal"));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, BufRead, Write};

use serde::Serialize;
use snowflake::{Decoded, Error, Id, Layout, TextForm, UnixMillis};

/// The longest ID text read whole; longer ones become an error record, and
/// only this much of them is kept.
pub const MAX_ID_LEN: usize = 256;

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

/// IDs read one at a time from any reader, with the line each is on.
#[derive(Debug)]
pub struct Tokens<R> {
    reader: R,
    line: u64,
    token: Vec<u8>,
    /// Bytes of the reader's buffer that the last token lent out, consumed
    /// when the next is asked for.
    lent: usize,
}

/// One whitespace-separated piece of the input.
#[derive(Debug)]
pub struct Token<'a> {
    /// The 1-based line it starts on.
    pub line: u64,
    /// The bytes, or why they cannot be an ID at all (too long). They are
    /// not checked to be UTF-8 here: [`Id::parse_bytes`] does that only for
    /// an ID it cannot read.
    pub text: Result<&'a [u8], Error>,
}

impl Token<'_> {
    /// The ID in the token, read in `form` (or decimal and `0x` hex).
    pub fn id(&self, form: Option<TextForm>) -> Result<Id, Error> {
        match &self.text {
            Ok(bytes) => Id::parse_bytes(bytes, form),
            Err(err) => Err(err.clone()),
        }
    }

    /// The token as text, for error records; invalid UTF-8 replaced.
    pub fn input(&self) -> std::borrow::Cow<'_, str> {
        match &self.text {
            Ok(bytes) => String::from_utf8_lossy(bytes),
            Err(_) => std::borrow::Cow::Borrowed(""),
        }
    }
}

impl<R: BufRead> Tokens<R> {
    /// Reads tokens from `reader`, counting lines from 1.
    pub fn new(reader: R) -> Self {
        Tokens {
            reader,
            line: 1,
            token: Vec::with_capacity(64),
            lent: 0,
        }
    }

    /// The next token, or `None` at the end of the input.
    pub fn next_token(&mut self) -> io::Result<Option<Token<'_>>> {
        self.reader.consume(std::mem::take(&mut self.lent));
        // The common case: the whole token, and the whitespace after it,
        // already in the reader's buffer. It is lent from there, not copied.
        if let Some((start, end, lines)) = self.whole_token()? {
            // The buffer is asked for again only so that the token can
            // borrow it; nothing was consumed, so it holds the same bytes (a
            // reader that broke that promise gets an error, not a panic).
            let buf = self.reader.fill_buf()?;
            let text = buf
                .get(start..end)
                .ok_or_else(|| io::Error::other("the reader's buffer changed between two looks"))?;
            self.line += lines;
            self.lent = end;
            return Ok(Some(Token {
                line: self.line,
                text: Ok(text),
            }));
        }
        self.token.clear();
        let mut started = false;
        let mut start_line = self.line;
        let mut too_long = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if buf.is_empty() {
                break;
            }
            let mut i = 0;
            let mut ended = false;
            while i < buf.len() {
                let byte = buf[i];
                if byte.is_ascii_whitespace() {
                    if started {
                        ended = true;
                        break;
                    }
                    if byte == b'\n' {
                        self.line += 1;
                    }
                    i += 1;
                    continue;
                }
                if !started {
                    started = true;
                    start_line = self.line;
                }
                let end = buf[i..]
                    .iter()
                    .position(u8::is_ascii_whitespace)
                    .map_or(buf.len(), |p| i + p);
                let room = MAX_ID_LEN.saturating_sub(self.token.len());
                let take = (end - i).min(room);
                self.token.extend_from_slice(&buf[i..i + take]);
                too_long |= end - i > room;
                i = end;
            }
            self.reader.consume(i);
            if ended {
                break;
            }
        }
        if !started {
            return Ok(None);
        }
        let text = if too_long {
            let shown: String = String::from_utf8_lossy(&self.token)
                .chars()
                .take(32)
                .collect();
            Err(Error::invalid_value(
                "id",
                &format!("\"{shown}...\""),
                "an ID is at most 256 characters",
            ))
        } else {
            Ok(&self.token[..])
        };
        Ok(Some(Token {
            line: start_line,
            text,
        }))
    }

    /// Where the next token lies in the reader's buffer, and how many line
    /// breaks come before it, if all of it and the whitespace that ends it
    /// are there and it is not too long. Nothing is consumed or counted
    /// here: the caller does both once it has lent the token out.
    fn whole_token(&mut self) -> io::Result<Option<(usize, usize, u64)>> {
        let buf = match self.reader.fill_buf() {
            Ok(buf) => buf,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => return Ok(None),
            Err(err) => return Err(err),
        };
        let mut start = 0;
        let mut lines = 0;
        while let Some(&byte) = buf.get(start) {
            if !byte.is_ascii_whitespace() {
                break;
            }
            lines += u64::from(byte == b'\n');
            start += 1;
        }
        // A byte above the space is never whitespace: one comparison for
        // each character of an ID.
        let end = buf[start..]
            .iter()
            .position(|&b| b <= b' ' && b.is_ascii_whitespace())
            .map(|p| start + p);
        match end {
            Some(end) if end > start && end - start <= MAX_ID_LEN => Ok(Some((start, end, lines))),
            _ => Ok(None),
        }
    }
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
    /// Where [`Records::csv_row`] builds one row, with room for the longest.
    scratch: Vec<u8>,
}

impl<'l, W: Write> Records<'l, W> {
    /// Starts the output: the CSV header, or the JSON array's `[`. IDs in
    /// the CSV's `id` column are written in `form` (the JSON records carry
    /// every form).
    pub fn new(out: W, layout: &'l Layout, format: Format, form: TextForm) -> io::Result<Self> {
        let mut records = Records {
            out,
            layout,
            format,
            form,
            written: 0,
            row: Vec::with_capacity(FLUSH_AT + 4096),
            scratch: vec![0; ROW_FIXED + layout.fields().len() * (TextForm::MAX_LEN + 1)],
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
        // Sized for the layout given to `new`; a breakdown in a layout of
        // more fields (a library caller may pass one) gets room too.
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
        if self.row.len() >= FLUSH_AT {
            self.out.write_all(&self.row)?;
            self.row.clear();
        }
        Ok(())
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

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(row: &mut Vec<u8>, text: &str) {
    if !text.contains([',', '"', '\n', '\r']) {
        row.extend_from_slice(text.as_bytes());
        return;
    }
    row.push(b'"');
    for byte in text.bytes() {
        if byte == b'"' {
            row.push(b'"');
        }
        row.push(byte);
    }
    row.push(b'"');
}

/// How many IDs a stream held, decoded and not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Records with a breakdown.
    pub ok: u64,
    /// Error records.
    pub bad: u64,
}

/// Why a stream stopped early.
#[derive(Debug)]
pub enum StreamError {
    /// Reading the input or writing the records failed.
    Io(io::Error),
    /// The input holds more IDs than `limit`.
    TooMany {
        /// The limit that was passed.
        limit: u64,
    },
}

impl From<io::Error> for StreamError {
    fn from(err: io::Error) -> Self {
        StreamError::Io(err)
    }
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Io(err) => err.fmt(f),
            StreamError::TooMany { limit } => {
                write!(
                    f,
                    "the input holds more than {limit} IDs; give at most {limit}"
                )
            }
        }
    }
}

impl std::error::Error for StreamError {}

impl From<StreamError> for io::Error {
    fn from(err: StreamError) -> Self {
        match err {
            StreamError::Io(err) => err,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// Decodes every ID of `input` into `records`, up to `limit` IDs. IDs are
/// read in `form`, or as [`Id::parse`] reads them (decimal, `0x` hex). `on_bad`
/// hears of each bad one as well (the CLI's text output reports them on
/// stderr); it may fail the stream by returning an error.
pub fn decode_stream<R: BufRead, W: Write>(
    input: R,
    form: Option<TextForm>,
    limit: Option<u64>,
    records: &mut Records<'_, W>,
    mut on_bad: impl FnMut(u64, &str, &Error) -> io::Result<()>,
) -> Result<Counts, StreamError> {
    let mut tokens = Tokens::new(input);
    let mut counts = Counts::default();
    while let Some(token) = tokens.next_token()? {
        if limit.is_some_and(|limit| counts.ok + counts.bad >= limit) {
            return Err(StreamError::TooMany {
                limit: limit.unwrap_or(0),
            });
        }
        let line = token.line;
        match token.id(form).and_then(|id| records.layout().decode(id)) {
            Ok(decoded) => {
                counts.ok += 1;
                records.ok(line, &decoded)?;
            }
            Err(err) => {
                counts.bad += 1;
                let input = token.input();
                records.bad(line, &input, &err)?;
                on_bad(line, &input, &err)?;
            }
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: &[u8], capacity: usize) -> Vec<(u64, Result<String, String>)> {
        let reader = io::BufReader::with_capacity(capacity, input);
        let mut tokens = Tokens::new(reader);
        let mut out = Vec::new();
        while let Some(t) = tokens.next_token().unwrap() {
            out.push((
                t.line,
                t.text
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .map_err(|e| e.to_string()),
            ));
        }
        out
    }

    /// A reader interrupted by a signal on every other read loses nothing.
    #[test]
    fn an_interrupted_read_is_retried() {
        struct Flaky<'a> {
            data: &'a [u8],
            interrupt: bool,
        }
        impl io::Read for Flaky<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.interrupt = !self.interrupt;
                if self.interrupt {
                    return Err(io::ErrorKind::Interrupted.into());
                }
                // Three bytes at a time, so that tokens straddle reads.
                let n = buf.len().min(3).min(self.data.len());
                buf[..n].copy_from_slice(&self.data[..n]);
                self.data = &self.data[n..];
                Ok(n)
            }
        }
        let input = b"4194439168 12\n\n0xfa021000\n";
        let reader = io::BufReader::with_capacity(
            8,
            Flaky {
                data: input,
                interrupt: false,
            },
        );
        let mut tokens = Tokens::new(reader);
        let mut got = Vec::new();
        while let Some(t) = tokens.next_token().unwrap() {
            got.push((
                t.line,
                String::from_utf8_lossy(t.text.unwrap()).into_owned(),
            ));
        }
        assert_eq!(
            got,
            [
                (1, "4194439168".to_string()),
                (1, "12".to_string()),
                (3, "0xfa021000".to_string())
            ]
        );
    }

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
    fn tokens_carry_their_line_whatever_the_buffer_size() {
        let input = b"  1 22\n\n333\t4444\r\n 55555 \n";
        let expected: Vec<(u64, Result<String, String>)> =
            [(1, "1"), (1, "22"), (3, "333"), (3, "4444"), (4, "55555")]
                .into_iter()
                .map(|(l, t)| (l, Ok(t.to_string())))
                .collect();
        // A one-byte buffer splits every token across reads.
        for capacity in [1, 2, 3, 7, 64] {
            assert_eq!(tokens(input, capacity), expected, "capacity {capacity}");
        }
        assert!(tokens(b"", 8).is_empty());
        assert!(tokens(b" \n\t ", 8).is_empty());
    }

    #[test]
    fn overlong_and_non_utf8_tokens_are_errors_that_do_not_stop_the_rest() {
        let mut input = vec![b'9'; 10_000];
        input.extend_from_slice(b"\n\xff\xfe 7\n");
        let got = tokens(&input, 100);
        assert_eq!(got.len(), 3);
        let long = got[0].1.as_ref().unwrap_err();
        assert!(long.starts_with("id \"99999999"), "{long}");
        assert!(
            long.ends_with("is not allowed; an ID is at most 256 characters"),
            "{long}"
        );
        assert!(long.len() < 120, "{long}");
        assert_eq!(got[1], (2, Ok("\u{fffd}\u{fffd}".to_string())));
        let bad = Token {
            line: 2,
            text: Ok(b"\xff\xfe"),
        };
        assert!(
            bad.id(None)
                .unwrap_err()
                .to_string()
                .contains("an ID is text in UTF-8")
        );
        assert_eq!(bad.input(), "\u{fffd}\u{fffd}");
        assert_eq!(got[2], (2, Ok("7".to_string())));
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

    #[test]
    fn every_format_gives_one_record_per_id_in_order() {
        let twitter = Layout::twitter();
        let input = "1541815603606036480\nnope 9223372036854775808\n0x0";
        for format in [Format::Json, Format::Ndjson, Format::Csv] {
            let mut records =
                Records::new(Vec::new(), &twitter, format, TextForm::Decimal).unwrap();
            let counts =
                decode_stream(input.as_bytes(), None, None, &mut records, |_, _, _| Ok(()))
                    .unwrap();
            assert_eq!(counts, Counts { ok: 2, bad: 2 });
            let out = String::from_utf8(records.finish().unwrap()).unwrap();
            let rows: Vec<serde_json::Value> = match format {
                Format::Json => serde_json::from_str(&out).unwrap(),
                Format::Ndjson => out
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect(),
                Format::Csv => {
                    let lines: Vec<&str> = out.lines().collect();
                    assert_eq!(lines.len(), 5, "{out}");
                    assert_eq!(
                        lines[1],
                        "1,1541815603606036480,1656432460105,2022-06-28T16:07:40.105Z,11,26,0,"
                    );
                    assert!(
                        lines[2].starts_with("2,nope,,,,,,\"id \"\"nope\"\" is not decimal"),
                        "{}",
                        lines[2]
                    );
                    assert!(
                        lines[3].starts_with(
                            "2,9223372036854775808,,,,,,\"id 9223372036854775808 has the sign bit set"
                        ),
                        "{}",
                        lines[3]
                    );
                    assert_eq!(
                        lines[4],
                        "3,0,1288834974657,2010-11-04T01:42:54.657Z,0,0,0,"
                    );
                    continue;
                }
            };
            assert_eq!(rows.len(), 4);
            assert_eq!(rows[0]["time"], "2022-06-28T16:07:40.105Z");
            assert_eq!(
                rows[0]["text"]["base62"],
                Id::new(1541815603606036480).to_text(TextForm::Base62)
            );
            assert_eq!(
                rows[1],
                serde_json::json!({
                    "line": 2, "input": "nope", "field": "id",
                    "error": Id::parse("nope").unwrap_err().to_string(),
                })
            );
            assert_eq!(rows[2]["line"], 2);
            assert_eq!(rows[2]["field"], "id");
            assert_eq!(rows[3]["id"], "0");
        }
    }

    #[test]
    fn the_limit_stops_the_stream_with_a_clear_error() {
        let twitter = Layout::twitter();
        let mut records =
            Records::new(Vec::new(), &twitter, Format::Ndjson, TextForm::Decimal).unwrap();
        let err = decode_stream(
            "1 2 3 4".as_bytes(),
            None,
            Some(3),
            &mut records,
            |_, _, _| Ok(()),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the input holds more than 3 IDs; give at most 3"
        );
        let mut records =
            Records::new(Vec::new(), &twitter, Format::Ndjson, TextForm::Decimal).unwrap();
        let counts = decode_stream(
            "1 2 3".as_bytes(),
            None,
            Some(3),
            &mut records,
            |_, _, _| Ok(()),
        )
        .unwrap();
        assert_eq!(counts.ok, 3);
    }

    #[test]
    fn a_named_form_reads_and_writes_ids_in_it() {
        let twitter = Layout::twitter();
        let id = Id::new(1541815603606036480);
        let input = format!("{}\n", id.to_text(TextForm::Base62));
        let mut records =
            Records::new(Vec::new(), &twitter, Format::Csv, TextForm::Base62).unwrap();
        decode_stream(
            input.as_bytes(),
            Some(TextForm::Base62),
            None,
            &mut records,
            |_, _, _| Ok(()),
        )
        .unwrap();
        let out = String::from_utf8(records.finish().unwrap()).unwrap();
        assert!(
            out.lines().nth(1).unwrap().starts_with(&format!(
                "1,{},1656432460105,",
                id.to_text(TextForm::Base62)
            )),
            "{out}"
        );
    }
}

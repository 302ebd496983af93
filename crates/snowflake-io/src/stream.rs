//! A whole stream of IDs decoded into records, one ID at a time: the loop
//! that `snowflake decode -` and `POST /api/v1/decode` both run.

use std::io::{self, BufRead, Write};

use snowflake::{Error, Id, TextForm};

use crate::records::Records;
use crate::tokens::Tokens;

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
///
/// [`Id::parse`]: snowflake::Id::parse
pub fn decode_stream<R: BufRead, W: Write>(
    input: R,
    form: Option<TextForm>,
    limit: Option<u64>,
    records: &mut Records<'_, W>,
    on_bad: impl FnMut(u64, &str, &Error) -> io::Result<()>,
) -> Result<Counts, StreamError> {
    decode_stream_through(input, form, limit, records, Ok, on_bad)
}

/// [`decode_stream`] with each ID first passed `through` a function that
/// may refuse it (`snowflake unmask --json` decodes what a key unmasks): a
/// refusal is an error record, as a bad ID is.
pub fn decode_stream_through<R: BufRead, W: Write>(
    input: R,
    form: Option<TextForm>,
    limit: Option<u64>,
    records: &mut Records<'_, W>,
    mut through: impl FnMut(Id) -> Result<Id, Error>,
    mut on_bad: impl FnMut(u64, &str, &Error) -> io::Result<()>,
) -> Result<Counts, StreamError> {
    let mut decoder = Decoder::new(input, form, limit);
    while decoder.next_through(records, &mut through, &mut on_bad)? {}
    Ok(decoder.counts())
}

/// [`decode_stream`] one ID at a time, for a caller that hands the records
/// on in pieces (the API's answer, made as the client reads).
#[derive(Debug)]
pub struct Decoder<R> {
    tokens: Tokens<R>,
    form: Option<TextForm>,
    limit: Option<u64>,
    counts: Counts,
}

impl<R: BufRead> Decoder<R> {
    /// A decoder of the IDs in `input`, read in `form`, at most `limit`.
    pub fn new(input: R, form: Option<TextForm>, limit: Option<u64>) -> Self {
        Decoder {
            tokens: Tokens::new(input),
            form,
            limit,
            counts: Counts::default(),
        }
    }

    /// Writes the next ID's record; `false` once the input has no more.
    pub fn next<W: Write>(
        &mut self,
        records: &mut Records<'_, W>,
        on_bad: impl FnMut(u64, &str, &Error) -> io::Result<()>,
    ) -> Result<bool, StreamError> {
        self.next_through(records, Ok, on_bad)
    }

    /// [`Decoder::next`], the ID first passed `through` a function that may
    /// refuse it.
    fn next_through<W: Write>(
        &mut self,
        records: &mut Records<'_, W>,
        mut through: impl FnMut(Id) -> Result<Id, Error>,
        mut on_bad: impl FnMut(u64, &str, &Error) -> io::Result<()>,
    ) -> Result<bool, StreamError> {
        let Some(token) = self.tokens.next_token()? else {
            return Ok(false);
        };
        if let Some(limit) = self.limit
            && self.counts.ok + self.counts.bad >= limit
        {
            return Err(StreamError::TooMany { limit });
        }
        let line = token.line;
        match token
            .id(self.form)
            .and_then(&mut through)
            .and_then(|id| records.layout().decode(id))
        {
            Ok(decoded) => {
                self.counts.ok += 1;
                records.ok(line, &decoded)?;
            }
            Err(err) => {
                self.counts.bad += 1;
                let input = token.input();
                records.bad(line, &input, &err)?;
                on_bad(line, &input, &err)?;
            }
        }
        Ok(true)
    }

    /// The records written so far, good and bad.
    pub fn counts(&self) -> Counts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Format;
    use snowflake::{Id, Layout};

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
        // `input` decoded with a limit of 3 IDs.
        let decode = |input: &str| {
            let mut records =
                Records::new(Vec::new(), &twitter, Format::Ndjson, TextForm::Decimal).unwrap();
            decode_stream(input.as_bytes(), None, Some(3), &mut records, |_, _, _| {
                Ok(())
            })
        };
        let err = decode("1 2 3 4").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the input holds more than 3 IDs; give at most 3"
        );
        assert_eq!(decode("1 2 3").unwrap().ok, 3);
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

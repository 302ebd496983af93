//! What the command line and the HTTP service read and write the same way,
//! in a crate that neither owns, so that `snowflake decode` never passes
//! through the HTTP stack: times, layouts and field values from text
//! ([`parse_time`], [`resolve_layout`], [`parse_fields`], [`split_fields`],
//! [`all_layouts`]), and many IDs at once: the tokenizer and the record writers that
//! `snowflake decode -` and `POST /api/v1/decode` share, so that a stream
//! on the command line and a request body give the same records in the
//! same shapes.
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
//! use snowflake_io::{Format, Records, decode_stream};
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
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod input;
mod records;
mod stream;
mod tokens;

pub use input::{all_layouts, parse_fields, parse_time, resolve_layout, split_fields};
pub use records::{BadRecord, Format, Records};
pub use stream::{Counts, Decoder, StreamError, decode_stream, decode_stream_through};
pub use tokens::{MAX_ID_LEN, Token, Tokens};

//! IDs read the way `decode` reads them, for every command that does
//! (`decode`, `mask`, `unmask`): from the arguments, all or nothing; or
//! streamed from stdin in constant memory, where a bad ID is reported with
//! its line and the rest goes on, the exit status saying afterwards whether
//! any was bad.

use std::io::{self, BufRead, IsTerminal, Write};

use snowflake::{Error, Id, Layout, TextForm};
use snowflake_io::{Format, Records, Tokens, decode_stream_through};

use crate::failure::Failure;
use crate::output::report;
use crate::usage::UsageError;

/// Large enough that reading and writing cost a system call per few
/// thousand IDs.
pub const BUFFER: usize = 1 << 16;

/// Whether the IDs come from stdin (`-`, or none given with stdin not a
/// terminal) rather than from the arguments.
pub fn from_stdin(ids: &[String]) -> Result<bool, Failure> {
    match ids {
        [] if io::stdin().is_terminal() => Err(Failure::Argument(UsageError::new(
            "id",
            "(none)",
            "give IDs as arguments, or - to read them from stdin",
        ))),
        [] => Ok(true),
        [one] if one == "-" => Ok(true),
        ids if ids.iter().any(|id| id == "-") => Err(Failure::Argument(UsageError::new(
            "id",
            "-",
            "- reads IDs from stdin and comes alone, without other IDs",
        ))),
        _ => Ok(false),
    }
}

/// Stdin, buffered.
pub fn stdin() -> impl BufRead {
    io::BufReader::with_capacity(BUFFER, io::stdin().lock())
}

/// How the text of consecutive IDs is joined on stdout.
#[derive(Clone, Copy)]
pub struct Joined {
    /// Written between two IDs' texts.
    pub between: &'static str,
    /// Written after each.
    pub after: &'static str,
}

/// Reads the IDs of `input` in `read_as` and writes what `make` makes of
/// each to stdout, joined as `joined` says; an ID that does not parse, or
/// that `make` refuses, is a line on stderr with its line number instead.
/// Returns how many were bad.
pub fn text(
    input: impl BufRead,
    read_as: Option<TextForm>,
    joined: Joined,
    mut make: impl FnMut(Id) -> Result<String, Error>,
) -> Result<u64, Failure> {
    let mut out = io::BufWriter::with_capacity(BUFFER, anstream::stdout().lock());
    let mut tokens = Tokens::new(input);
    let (mut bad, mut first) = (0, true);
    while let Some(token) = tokens.next_token()? {
        match token.id(read_as).and_then(&mut make) {
            Ok(text) => {
                if !first {
                    out.write_all(joined.between.as_bytes())?;
                }
                first = false;
                out.write_all(text.as_bytes())?;
                out.write_all(joined.after.as_bytes())?;
            }
            Err(err) => {
                bad += 1;
                // What went before is on stdout first, so the two read in
                // order when they share a terminal.
                out.flush()?;
                report(&format!("line {}: {err}", token.line));
            }
        }
    }
    out.flush()?;
    Ok(bad)
}

/// Reads the IDs of `input` in `read_as`, passes each `through` a function
/// that may refuse it, and writes its breakdown under `layout` as a
/// `format` record, or an error record. Returns how many were bad.
pub fn records(
    input: impl BufRead,
    layout: &Layout,
    read_as: Option<TextForm>,
    format: Format,
    write_as: TextForm,
    through: impl FnMut(Id) -> Result<Id, Error>,
) -> Result<u64, Failure> {
    // Records buffer their output themselves.
    let mut records = Records::new(io::stdout().lock(), layout, format, write_as)?;
    let counts =
        decode_stream_through(
            input,
            read_as,
            None,
            &mut records,
            through,
            |_, _, _| Ok(()),
        )
        .map_err(io::Error::from)?;
    drop(records.finish()?);
    Ok(counts.bad)
}

/// The error that ends a stream in which `bad` IDs could not be `done`
/// (decoded, masked), pointing to where each was reported.
pub fn outcome(bad: u64, done: &str, as_records: bool) -> Result<(), Failure> {
    match bad {
        0 => Ok(()),
        n => Err(Failure::BadInput(format!(
            "{n} of the IDs read could not be {done}; see {}",
            if as_records {
                "their error records"
            } else {
                "the lines above"
            }
        ))),
    }
}

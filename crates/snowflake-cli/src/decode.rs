//! `snowflake decode`: IDs from the arguments, or streamed from stdin.
//!
//! Arguments are all-or-nothing, like every other command: the first bad ID
//! is the error and nothing is printed. A stream is the opposite: it may be
//! millions of lines from a file, so a bad line becomes an error record (or a
//! line on stderr) and the rest goes on; the exit status says afterwards
//! whether any line was bad. The stream is read and written through buffers
//! in constant memory, one ID at a time.

use std::io::{self, BufRead, IsTerminal, Write};

use snowflake::{Clock, Id, Layout, Readings, SystemClock, TextForm};
use snowflake_io::{Format, Records, Tokens, all_layouts, decode_stream};

use crate::args::DecodeArgs;
use crate::failure::Failure;
use crate::output::{emit, json_line, report};
use crate::render;
use crate::usage::UsageError;

/// Large enough that reading and writing cost a system call per few
/// thousand IDs.
pub const BUFFER: usize = 1 << 16;

pub fn run(args: &DecodeArgs) -> Result<(), Failure> {
    let form = args.form.format;
    let l = &args.layout;
    if all_layouts(&l.layout, l.epoch.as_deref(), l.tick_ms.as_deref())? {
        return every_preset(args, form);
    }
    let layout = args.layout.resolve()?;
    let stream = from_stdin(&args.ids)?;
    let format = if args.json {
        Some(Format::Ndjson)
    } else if args.csv {
        Some(Format::Csv)
    } else {
        None
    };
    let output = form.unwrap_or(TextForm::Decimal);
    if !stream {
        return arguments(&args.ids, &layout, form, format);
    }
    let input = io::BufReader::with_capacity(BUFFER, io::stdin().lock());
    let bad = match format {
        Some(format) => records(input, &layout, form, format, output)?,
        None => text(input, &layout, form, output)?,
    };
    match bad {
        0 => Ok(()),
        n => Err(Failure::BadInput(format!(
            "{n} of the IDs read could not be decoded; see {}",
            if format.is_some() {
                "their error records"
            } else {
                "the lines above"
            }
        ))),
    }
}

/// Whether the IDs of a command that reads them like `decode` come from
/// stdin (`-`, or none given with stdin not a terminal) rather than from
/// the arguments.
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

/// `--layout all`: each ID given read under every preset, judged against
/// the system clock's now.
fn every_preset(args: &DecodeArgs, form: Option<TextForm>) -> Result<(), Failure> {
    let refuse = |allowed| Failure::Argument(UsageError::new("layout", "all", allowed));
    if args.ids.is_empty() || args.ids.iter().any(|id| id == "-") {
        return Err(refuse(
            "all reads IDs given as arguments; a stream takes one layout",
        ));
    }
    if args.csv {
        return Err(refuse("all has a text and a JSON form (--json), not CSV"));
    }
    let presets = Layout::presets();
    let now = SystemClock.now_ms();
    let mut text = String::new();
    for raw in &args.ids {
        let all = Readings::new(&presets, Id::parse_as(raw, form)?, now);
        if args.json {
            text.push_str(&json_line(&all));
        } else {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&render::readings(&all));
        }
    }
    emit(&text)
}

/// IDs given as arguments: every one must decode, or nothing is printed.
fn arguments(
    ids: &[String],
    layout: &Layout,
    form: Option<TextForm>,
    format: Option<Format>,
) -> Result<(), Failure> {
    let parsed: Vec<Id> = ids
        .iter()
        .map(|raw| Id::parse_as(raw, form))
        .collect::<Result<_, _>>()?;
    let output = form.unwrap_or(TextForm::Decimal);
    if let Some(Format::Csv) = format {
        let mut records = Records::new(Vec::new(), layout, Format::Csv, output)?;
        for (line, id) in (1..).zip(&parsed) {
            records.ok(line, &layout.decode(*id)?)?;
        }
        let csv = records.finish()?;
        return emit(&String::from_utf8_lossy(&csv));
    }
    let mut text = String::new();
    for id in parsed {
        let decoded = layout.decode(id)?;
        if format.is_some() {
            text.push_str(&json_line(&decoded));
        } else {
            text.push_str(&render::decoded(&decoded, output));
            if ids.len() > 1 {
                text.push('\n');
            }
        }
    }
    emit(&text)
}

/// A stream as NDJSON or CSV records; returns how many IDs were bad.
fn records(
    input: impl BufRead,
    layout: &Layout,
    form: Option<TextForm>,
    format: Format,
    output: TextForm,
) -> Result<u64, Failure> {
    // Records buffer their output themselves.
    let mut records = Records::new(io::stdout().lock(), layout, format, output)?;
    let counts = decode_stream(input, form, None, &mut records, |_, _, _| Ok(()))
        .map_err(io::Error::from)?;
    drop(records.finish()?);
    Ok(counts.bad)
}

/// A stream as the text breakdown, a blank line between IDs; each bad ID is
/// a line on stderr with its line number. Returns how many were bad.
fn text(
    input: impl BufRead,
    layout: &Layout,
    form: Option<TextForm>,
    output: TextForm,
) -> Result<u64, Failure> {
    let mut out = io::BufWriter::with_capacity(BUFFER, anstream::stdout().lock());
    let mut tokens = Tokens::new(input);
    let mut bad = 0;
    let mut first = true;
    while let Some(token) = tokens.next_token()? {
        let decoded = token.id(form).and_then(|id| layout.decode(id));
        match decoded {
            Ok(decoded) => {
                if !first {
                    out.write_all(b"\n")?;
                }
                first = false;
                out.write_all(render::decoded(&decoded, output).as_bytes())?;
            }
            Err(err) => {
                bad += 1;
                // What went before is on stdout first, so the two read in order
                // when they share a terminal.
                out.flush()?;
                report(&format!("line {}: {err}", token.line));
            }
        }
    }
    out.flush()?;
    Ok(bad)
}

//! `snowflake decode`: IDs from the arguments, or streamed from stdin.
//!
//! Arguments are all-or-nothing, like every other command: the first bad ID
//! is the error and nothing is printed. A stream is the opposite: it may be
//! millions of lines from a file, so a bad line becomes an error record (or a
//! line on stderr) and the rest goes on; the exit status says afterwards
//! whether any line was bad. The stream is read and written through buffers
//! in constant memory, one ID at a time.

use snowflake::{Clock, Id, Layout, Readings, SystemClock, TextForm};
use snowflake_io::{Format, Records, all_layouts};

use crate::args::DecodeArgs;
use crate::failure::Failure;
use crate::id_stream::{self, Joined, from_stdin};
use crate::output::{emit, json_line};
use crate::render;
use crate::usage::UsageError;

/// What the command writes: the text breakdown, or records.
#[derive(Clone, Copy)]
enum Written {
    Breakdown,
    Records(Format),
}

pub fn run(args: &DecodeArgs) -> Result<(), Failure> {
    // The form IDs are read in, when not decimal or 0x hex; the one they
    // are written back in, where they are written.
    let read_as = args.form.format;
    let write_as = read_as.unwrap_or(TextForm::Decimal);
    let l = &args.layout;
    if all_layouts(&l.layout, l.epoch.as_deref(), l.tick_ms.as_deref())? {
        return every_preset(args, read_as);
    }
    let layout = args.layout.resolve()?;
    let written = match (args.json, args.csv) {
        (true, _) => Written::Records(Format::Ndjson),
        (_, true) => Written::Records(Format::Csv),
        _ => Written::Breakdown,
    };
    if !from_stdin(&args.ids)? {
        return arguments(&args.ids, &layout, read_as, written);
    }
    let input = id_stream::stdin();
    let bad = match written {
        Written::Records(format) => {
            id_stream::records(input, &layout, read_as, format, write_as, Ok)?
        }
        Written::Breakdown => {
            // A blank line between two breakdowns.
            let joined = Joined {
                between: "\n",
                after: "",
            };
            id_stream::text(input, read_as, joined, |id| {
                Ok(render::decoded(&layout.decode(id)?, write_as))
            })?
        }
    };
    id_stream::outcome(bad, "decoded", matches!(written, Written::Records(_)))
}

/// `--layout all`: each ID given read under every preset, judged against
/// the system clock's now.
fn every_preset(args: &DecodeArgs, read_as: Option<TextForm>) -> Result<(), Failure> {
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
        let all = Readings::new(&presets, Id::parse_as(raw, read_as)?, now);
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
    read_as: Option<TextForm>,
    written: Written,
) -> Result<(), Failure> {
    let parsed: Vec<Id> = ids
        .iter()
        .map(|raw| Id::parse_as(raw, read_as))
        .collect::<Result<_, _>>()?;
    let write_as = read_as.unwrap_or(TextForm::Decimal);
    let mut text = String::new();
    match written {
        Written::Records(Format::Csv) => {
            let mut records = Records::new(Vec::new(), layout, Format::Csv, write_as)?;
            for (line, id) in (1..).zip(&parsed) {
                records.ok(line, &layout.decode(*id)?)?;
            }
            text = String::from_utf8_lossy(&records.finish()?).into_owned();
        }
        Written::Records(_) => {
            for id in parsed {
                text.push_str(&json_line(&layout.decode(id)?));
            }
        }
        Written::Breakdown => {
            for id in parsed {
                text.push_str(&render::decoded(&layout.decode(id)?, write_as));
                if ids.len() > 1 {
                    text.push('\n');
                }
            }
        }
    }
    emit(&text)
}

//! `snowflake audit`: IDs read as `decode -` reads them (any whitespace
//! between them, any text form, any layout), tallied by `snowflake-ops`'
//! [`Audit`], and the report as text or JSON.
//!
//! A token that is not an ID of the layout is reported on stderr with its
//! line, as `decode -` reports it, and listed in the JSON's `errors`; the
//! rest is read on, and the exit status is 2 at the end. Memory: see
//! `Audit` (about 8 to 32 bytes per distinct ID).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, IsTerminal};
use std::path::Path;

use serde::Serialize;
use snowflake::{Clock, Error, Id, Readings, TextForm, UnixMillis};
use snowflake_io::{BadRecord, Tokens, all_layouts};
use snowflake_ops::{Audit, AuditReport};

use crate::args::AuditArgs;
use crate::failure::Failure;
use crate::id_stream::BUFFER;
use crate::output::{emit, json_line, report};
use crate::render::table;
use crate::usage::UsageError;

/// A token that was not an ID, kept for the JSON report.
struct Bad {
    file: Option<String>,
    line: u64,
    input: String,
    error: Error,
}

/// What was read: the audit, and the tokens that were not IDs.
struct Reading<'a> {
    audit: Audit<'a>,
    form: Option<TextForm>,
    bad: u64,
    kept: Vec<Bad>,
    limit: usize,
}

impl Reading<'_> {
    /// Every token of one input into the audit; a bad one is reported on
    /// stderr at once, with its file (unless stdin) and line.
    fn read(&mut self, input: impl BufRead, file: Option<&Path>) -> Result<(), Failure> {
        let mut tokens = Tokens::new(input);
        while let Some(token) = tokens.next_token()? {
            let Err(error) = token.id(self.form).and_then(|id| self.audit.add(id)) else {
                continue;
            };
            self.bad += 1;
            let file = file.map(|f| f.display().to_string());
            let place = match &file {
                Some(file) => format!("{file} line {}", token.line),
                None => format!("line {}", token.line),
            };
            report(&format!("{place}: {error}"));
            if self.kept.len() < self.limit {
                self.kept.push(Bad {
                    file,
                    line: token.line,
                    input: token.input().into_owned(),
                    error,
                });
            }
        }
        Ok(())
    }
}

pub fn run(args: &AuditArgs, clock: &dyn Clock) -> Result<(), Failure> {
    let l = &args.layout;
    if all_layouts(&l.layout, l.epoch.as_deref(), l.tick_ms.as_deref())? {
        return Err(Failure::Argument(UsageError::new(
            "layout",
            "all",
            "an audit reads its IDs under one layout; name it",
        )));
    }
    let layout = args.layout.resolve()?;
    let form = args.form.format;
    let now_ms = args.now.now_ms(clock)?;
    let stdin = io::stdin();
    let from_stdin = args.files.is_empty() || args.files.iter().any(|f| f == Path::new("-"));
    if args.files.is_empty() && stdin.is_terminal() {
        return Err(Failure::Argument(UsageError::new(
            "file",
            "(none)",
            "give files of IDs, or pipe them in: snowflake audit < ids.txt",
        )));
    }
    if from_stdin && args.files.len() > 1 {
        return Err(Failure::Argument(UsageError::new(
            "file",
            "-",
            "- reads IDs from stdin and comes alone, without files",
        )));
    }
    let mut reading = Reading {
        audit: Audit::new(&layout, now_ms).limit(args.list),
        form,
        bad: 0,
        kept: Vec::new(),
        limit: args.list,
    };
    if from_stdin {
        reading.read(io::BufReader::with_capacity(BUFFER, stdin.lock()), None)?;
    } else {
        for path in &args.files {
            let file = File::open(path).map_err(|err| {
                Failure::Runtime(format!("cannot read {}: {err}", path.display()))
            })?;
            reading.read(io::BufReader::with_capacity(BUFFER, file), Some(path))?;
        }
    }
    let Reading {
        audit, bad, kept, ..
    } = reading;
    let audited = audit.finish();
    emit(&if args.json {
        json_line(&Json {
            report: &audited,
            bad,
            errors: kept.iter().map(ErrorJson::from).collect(),
        })
    } else {
        text(&audited, bad)
    })?;
    match bad {
        0 => Ok(()),
        n => Err(Failure::BadInput(format!(
            "{n} of the tokens read are not IDs of layout {}; see the lines above",
            layout.name()
        ))),
    }
}

/// The core's report with the tokens that were not IDs.
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    report: &'a AuditReport<'a>,
    bad: u64,
    errors: Vec<ErrorJson<'a>>,
}

/// A bad token as `decode --json` writes it, with its file when not stdin.
#[derive(Serialize)]
struct ErrorJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(flatten)]
    record: BadRecord<'a>,
}

impl<'a> From<&'a Bad> for ErrorJson<'a> {
    fn from(bad: &'a Bad) -> Self {
        ErrorJson {
            file: bad.file.as_deref(),
            record: BadRecord {
                line: bad.line,
                input: &bad.input,
                error: bad.error.to_string(),
                field: bad.error.field(),
            },
        }
    }
}

/// The time of an ID under the report's layout.
fn time_of(report: &AuditReport<'_>, id: Id) -> String {
    report
        .layout()
        .decode(id)
        .map_or_else(|_| "-".to_string(), |d| d.time().to_string())
}

/// A listing's heading: how many there are, and how many are shown.
fn heading(what: &str, count: u64, shown: usize) -> String {
    if shown as u64 == count {
        format!("\n{what} ({count}):\n")
    } else {
        format!("\n{what} ({count}, the first {shown} listed; --list shows more):\n")
    }
}

/// The report in text: a summary line, the counts, each listing that has
/// entries, and the verdict.
fn text(report: &AuditReport<'_>, bad: u64) -> String {
    let mut out = summary(report);
    out.push_str(&counts(report, bad));
    out.push_str(&duplicates(report));
    out.push_str(&strays(report));
    out.push_str(&nodes(report));
    out.push('\n');
    out.push_str(&verdict(report, bad));
    out
}

/// What was read, as what, when.
fn summary(report: &AuditReport<'_>) -> String {
    let mut out = format!(
        "Audit of {} IDs read as {}, judged at {}",
        report.ids(),
        report.layout().name(),
        UnixMillis(report.now_ms())
    );
    if let Some((first, last)) = report.span_ms() {
        let _ = write!(out, "; dated {} to {}", UnixMillis(first), UnixMillis(last));
    }
    out.push_str(".\n\n");
    out
}

/// The table of counts, with what each means; the platform's and the
/// sequence's rows only where the layout has them.
fn counts(report: &AuditReport<'_>, bad: u64) -> String {
    let layout = report.layout();
    let row = |name: &str, count: u64, what: String| [name.to_string(), count.to_string(), what];
    let mut rows: Vec<[String; 3]> = vec![
        row("ids", report.ids(), String::new()),
        row("distinct", report.distinct(), String::new()),
        row(
            "duplicated",
            report.duplicated_values(),
            format!(
                "values read more than once; {} copies beyond the first",
                report.extra_copies()
            ),
        ),
        row(
            "not increasing",
            report.not_increasing(),
            "IDs not above their node's ID before them: a clock set back, two processes on one \
             node, or a copy"
                .into(),
        ),
        row(
            "future",
            report.future(),
            format!(
                "IDs dated more than {} s after now",
                Readings::FUTURE_SLACK_MS / 1000
            ),
        ),
    ];
    if let (Some(early), Some(platform)) = (report.before_platform(), layout.platform()) {
        let day = UnixMillis(platform.launched_ms()).to_string();
        rows.push(row(
            "before platform",
            early,
            format!(
                "IDs dated before {} began ({})",
                platform.name(),
                &day[..10]
            ),
        ));
    }
    if let (Some(units), Some(seq)) = (report.saturated_units(), layout.sequence()) {
        rows.push(row(
            "saturated units",
            units,
            format!(
                "time units in which a node issued its last sequence number ({}): it used all {} \
                 and had to wait",
                seq.max(),
                seq.max() + 1
            ),
        ));
    }
    rows.push(row(
        "bad",
        bad,
        "tokens that are not IDs of the layout (on stderr)".into(),
    ));
    table(&["", "count", "what"], &rows)
}

/// The duplicated values, with how often each was read.
fn duplicates(report: &AuditReport<'_>) -> String {
    let duplicates = report.duplicates();
    if duplicates.is_empty() {
        return String::new();
    }
    let rows: Vec<[String; 3]> = duplicates
        .iter()
        .map(|d| {
            [
                d.id().to_string(),
                d.count().to_string(),
                time_of(report, d.id()),
            ]
        })
        .collect();
    heading(
        "Duplicated values",
        report.duplicated_values(),
        duplicates.len(),
    ) + &table(&["id", "times read", "time"], &rows)
}

/// IDs dated where they cannot be: the future, before the platform began.
fn strays(report: &AuditReport<'_>) -> String {
    let mut out = String::new();
    for (what, count, ids) in [
        ("From the future", report.future(), report.future_ids()),
        (
            "From before the platform began",
            report.before_platform().unwrap_or(0),
            report.before_platform_ids(),
        ),
    ] {
        if !ids.is_empty() {
            out.push_str(&heading(what, count, ids.len()));
            let rows: Vec<[String; 2]> = ids
                .iter()
                .map(|id| [id.to_string(), time_of(report, *id)])
                .collect();
            out.push_str(&table(&["id", "time"], &rows));
        }
    }
    out
}

/// Each node's IDs: how many, when, and how they ran.
fn nodes(report: &AuditReport<'_>) -> String {
    let nodes = report.nodes();
    if nodes.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = report.layout().node_fields().map(|f| f.name()).collect();
    let node_header = if names.is_empty() {
        "node".to_string()
    } else {
        names.join(",")
    };
    let rows: Vec<[String; 6]> = nodes
        .iter()
        .map(|n| {
            let fields: Vec<String> = n.fields().map(|(_, v)| v.to_string()).collect();
            [
                if fields.is_empty() {
                    "(the only one)".to_string()
                } else {
                    fields.join(",")
                },
                n.ids().to_string(),
                UnixMillis(n.first_ms()).to_string(),
                UnixMillis(n.last_ms()).to_string(),
                n.not_increasing().to_string(),
                n.saturated_units()
                    .map_or_else(|| "-".to_string(), |u| u.to_string()),
            ]
        })
        .collect();
    let header = [
        node_header.as_str(),
        "ids",
        "first",
        "last",
        "not increasing",
        "saturated units",
    ];
    heading("Nodes", nodes.len() as u64, nodes.len()) + &table(&header, &rows)
}

/// The last line: nothing wrong, or what to look at.
fn verdict(report: &AuditReport<'_>, bad: u64) -> String {
    let mut look = Vec::new();
    if report.extra_copies() > 0 {
        look.push("duplicates");
    }
    if report.not_increasing() > 0 {
        look.push("IDs not increasing on a node");
    }
    if report.future() > 0 {
        look.push("IDs from the future");
    }
    if report.before_platform().unwrap_or(0) > 0 {
        look.push("IDs from before the platform began");
    }
    if bad > 0 {
        look.push("tokens that are not IDs");
    }
    if look.is_empty() {
        "Nothing looks wrong.\n".to_string()
    } else {
        format!("Look at: {}.\n", look.join(", "))
    }
}

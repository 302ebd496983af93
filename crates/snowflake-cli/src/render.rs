//! Text output. Colour codes are written unconditionally; `anstream` strips
//! them when stdout is not a terminal or `NO_COLOR` is set.

use std::fmt::Write as _;

use snowflake::{Bounds, Decoded, Layout, Readings, TextForm, TimeLeft, UnixMillis};

const RESET: &str = "\x1b[0m";
/// One colour per segment, cycled: sign, timestamp, then the fields.
const COLOURS: [&str; 6] = [
    "\x1b[2m",  // dim
    "\x1b[36m", // cyan
    "\x1b[33m", // yellow
    "\x1b[35m", // magenta
    "\x1b[32m", // green
    "\x1b[34m", // blue
];

/// The ID alone on the first line (in `form`), then its bits by segment,
/// the time, each field and the ID's other text forms.
pub fn decoded(d: &Decoded<'_>, form: TextForm) -> String {
    let segments = d.segments();
    let offset = usize::from(!d.layout().has_sign_bit());
    let colour = |i: usize| COLOURS[(i + offset) % COLOURS.len()];
    let mut out = format!("{}\n", d.id().to_text(form));
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{}{}{RESET}", colour(i), s.binary());
    }
    out.push('\n');
    let width = segments
        .iter()
        .map(|s| s.name().len())
        .max()
        .unwrap_or(0)
        .max(6);
    for (i, s) in segments.iter().enumerate() {
        let _ = write!(
            out,
            "{}{:<width$}{RESET} {:>2} bits  {}",
            colour(i),
            s.name(),
            s.bits(),
            s.value()
        );
        if s.name() == snowflake::Layout::TIME_FIELD {
            let _ = write!(out, "  = {} ({} ms)", d.time(), d.timestamp_ms());
        }
        out.push('\n');
    }
    for &other in TextForm::ENCODED {
        let _ = writeln!(out, "{:<width$} {}", other.name(), d.id().to_text(other));
    }
    let _ = writeln!(out, "{:<width$} {}", "layout", d.layout());
    out
}

pub fn bounds(b: &Bounds) -> String {
    format!(
        "first {}  ({})\nlast  {}  ({})\nWHERE id BETWEEN {} AND {}\n",
        b.first(),
        UnixMillis(b.from_ms()),
        b.last(),
        UnixMillis(b.to_ms()),
        b.first(),
        b.last()
    )
}

/// The presets, each with the time it has left from `now_ms`.
pub fn layouts(layouts: &[Layout], now_ms: i64) -> String {
    let rows: Vec<[String; 10]> = layouts
        .iter()
        .map(|l| {
            let tick = if l.tick_ms() == 1 {
                String::new()
            } else {
                format!(" ({} ms tick)", l.tick_ms())
            };
            let top = match l.bits() {
                64 => String::new(),
                63 => "sign:1,".into(),
                bits => format!("unused:{},", 64 - bits),
            };
            let years =
                (l.last_timestamp_ms() - l.epoch_ms()) as f64 / TimeLeft::MS_PER_YEAR as f64;
            let left = l.time_left(now_ms);
            [
                l.name().into_owned(),
                format!("{top}{}", l.spec()),
                format!("{}{tick}", UnixMillis(l.epoch_ms())),
                format!("{} ({years:.0} years)", UnixMillis(l.last_timestamp_ms())),
                if left.is_short() && !left.is_exhausted() {
                    format!("{left} (under a year)")
                } else {
                    left.to_string()
                },
                l.ids_per_ms()
                    .map(|n| format!("{n}"))
                    .unwrap_or_else(|| "-".into()),
                l.node_count().to_string(),
                l.sequence()
                    .map(|s| s.name().to_string())
                    .unwrap_or_else(|| "-".into()),
                l.bits().to_string(),
                if l.is_js_safe() { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    let header = [
        "name",
        "bits (most significant first)",
        "epoch",
        "runs out after",
        "time left",
        "IDs/ms/node",
        "nodes",
        "sequence",
        "width",
        "JS-safe (under 2^53)",
    ];
    let mut out = table(&header, &rows);
    out.push_str(&format!("(time left from {})\n", UnixMillis(now_ms)));
    out
}

/// Columns padded to their widest cell, two spaces apart.
pub fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[&str]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            let _ = write!(text, "{cell:<w$}");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(header);
    for row in rows {
        line(&row.each_ref().map(String::as_str));
    }
    out
}

/// One ID under every preset: a line saying when it was judged, then a row
/// per layout with its time, verdict and why.
pub fn readings(all: &Readings<'_>) -> String {
    let rows: Vec<[String; 5]> = all
        .readings()
        .iter()
        .map(|r| {
            let platform = r.layout().platform().map_or_else(
                || "-".to_string(),
                |p| {
                    format!(
                        "{} (since {})",
                        p.name(),
                        &UnixMillis(p.launched_ms()).to_string()[..10]
                    )
                },
            );
            [
                r.layout().name().into_owned(),
                platform,
                r.decoded()
                    .map_or_else(|| "-".to_string(), |d| d.time().to_string()),
                r.verdict().to_string(),
                r.reason().unwrap_or("").to_string(),
            ]
        })
        .collect();
    let mut out = format!(
        "{} under every preset, judged at {}:\n",
        all.id(),
        UnixMillis(all.now_ms())
    );
    out.push_str(&table(
        &["layout", "platform", "time", "verdict", "why"],
        &rows,
    ));
    out
}

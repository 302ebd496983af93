//! `snowflake plan`: the requirements from the flags, a proposal (or an
//! assessment of `--layout`) from `snowflake-ops`' planner, and the answer
//! as text or JSON.
//! A plan that cannot be met, or a layout that falls short, is still
//! printed in full, then exits 1 with one line saying so, so that a script
//! can use the command as a guard.

use std::fmt::Write as _;

use snowflake::{Clock, Error, UnixMillis};
use snowflake_io::{parse_time, resolve_layout};
use snowflake_ops::{Assessment, Proposal, Requirements};

use crate::args::PlanArgs;
use crate::failure::Failure;
use crate::output::{emit, json_line};
use crate::render::table;

pub fn run(args: &PlanArgs, clock: &dyn Clock) -> Result<(), Failure> {
    let from = match &args.from {
        Some(text) => parse_date("from", text)?,
        None => clock.now_ms(),
    };
    let needs =
        Requirements::new(args.rate, args.nodes, args.years, from)?.with_js_safe(args.js_safe);
    if let Some(spec) = &args.layout {
        let tick = args.tick_ms.map(|t| t.to_string());
        let layout = resolve_layout(spec, args.epoch.as_deref(), tick.as_deref())?;
        let fit = needs.check(&layout);
        emit(&if args.json {
            json_line(&fit)
        } else {
            checked(&fit)
        })?;
        let short = fit.gaps().len();
        return match short {
            0 => Ok(()),
            n => Err(Failure::Runtime(format!(
                "layout {} falls short of the needs in {n} way{}; see above",
                layout.name(),
                if n == 1 { "" } else { "s" }
            ))),
        };
    }
    let needs = match args.tick_ms {
        Some(tick) => needs.with_tick_ms(tick)?,
        None => needs,
    };
    let proposal = needs.plan();
    emit(&if args.json {
        json_line(&proposal)
    } else {
        planned(&proposal)
    })?;
    match proposal.proposed() {
        Some(_) => Ok(()),
        None => Err(Failure::Runtime(format!(
            "the needs take {} bits, more than the {} a layout has; {}",
            proposal.needed().total(),
            needs.width(),
            if proposal.alternatives().is_empty() {
                "ask for less of several"
            } else {
                "give one thing up, as above"
            }
        ))),
    }
}

/// A time as every command reads it, or a plain date (2025-01-01) as its
/// start, 00:00 UTC: a lifetime is planned in days, not milliseconds.
fn parse_date(field: &'static str, text: &str) -> Result<i64, Error> {
    parse_time(field, text).or_else(|err| {
        text.trim()
            .parse::<jiff::civil::Date>()
            .ok()
            .and_then(|date| date.to_zoned_datetime(jiff::tz::TimeZone::UTC).ok())
            .map(|start| start.timestamp().as_millisecond())
            .ok_or(err)
    })
}

/// The requirements in one sentence.
fn requirements_line(needs: &Requirements) -> String {
    format!(
        "Needs: {} a second per node at peak, {}, {} from {} (until {}), in {} bits.\n",
        plural(needs.rate_per_sec(), "ID"),
        plural(needs.nodes(), "node"),
        plural(needs.years(), "year"),
        UnixMillis(needs.from_ms()),
        UnixMillis(needs.until_ms()),
        needs.width(),
    )
}

/// The flags that give the layout to every other command.
fn flags(fit: &Assessment) -> String {
    let layout = fit.layout();
    format!(
        "--layout {} --tick-ms {} --epoch {}",
        layout.spec(),
        layout.tick_ms(),
        layout.epoch_ms()
    )
}

/// A count of capacity over need: `128x`, `1.74x`, `0.85x`.
fn times(headroom: f64) -> String {
    if headroom >= 10.0 {
        format!("{headroom:.0}x")
    } else {
        format!("{headroom:.2}x")
    }
}

/// A rate, whole where it is whole.
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn plural(n: impl std::fmt::Display, one: &str) -> String {
    let text = n.to_string();
    let s = if text == "1" { "" } else { "s" };
    format!("{text} {one}{s}")
}

/// One row each for time, the node fields and the sequence: bits, what
/// they hold, what was asked for, the headroom.
fn assessment_table(fit: &Assessment) -> String {
    let layout = fit.layout();
    let needs = fit.requirements();
    let lifetime = fit.lifetime();
    let holds_time = if lifetime.is_exhausted() {
        format!(
            "until {}, before the start",
            UnixMillis(lifetime.runs_out_ms())
        )
    } else {
        format!(
            "until {} ({lifetime} from the start)",
            UnixMillis(lifetime.runs_out_ms())
        )
    };
    let node_names: Vec<&str> = layout.node_fields().map(|f| f.name()).collect();
    let node_bits: u32 = layout.node_fields().map(|f| u32::from(f.bits())).sum();
    let mut rows = vec![
        [
            "time".to_string(),
            layout.time_bits().to_string(),
            holds_time,
            plural(needs.years(), "year"),
            times(fit.time_headroom()),
        ],
        [
            if node_names.is_empty() {
                "(no node field)".to_string()
            } else {
                node_names.join("+")
            },
            node_bits.to_string(),
            plural(layout.node_count(), "node"),
            plural(needs.nodes(), "node"),
            times(fit.node_headroom()),
        ],
    ];
    match (layout.sequence(), fit.rate_per_sec(), fit.rate_headroom()) {
        (Some(seq), Some(per_sec), Some(headroom)) => rows.push([
            seq.name().to_string(),
            seq.bits().to_string(),
            format!(
                "{} per {} ms tick, {} a second",
                plural(seq.max() + 1, "ID"),
                layout.tick_ms(),
                number(per_sec)
            ),
            format!("{} a second", needs.rate_per_sec()),
            times(headroom),
        ]),
        _ => rows.push([
            "(no sequence)".to_string(),
            "0".to_string(),
            "cannot generate".to_string(),
            format!("{} a second", needs.rate_per_sec()),
            "-".to_string(),
        ]),
    }
    table(&["field", "bits", "holds", "asked for", "headroom"], &rows)
}

fn gap_lines(fit: &Assessment, indent: &str) -> String {
    let mut out = String::new();
    for short in fit.gaps() {
        let _ = writeln!(out, "{indent}- {short}");
    }
    out
}

/// `plan --layout`: the layout against the requirements.
fn checked(fit: &Assessment) -> String {
    let layout = fit.layout();
    let mut out = requirements_line(fit.requirements());
    let name = match layout.name() {
        name if name == layout.spec() => name.into_owned(),
        name => format!("{name} ({})", layout.spec()),
    };
    let _ = writeln!(
        out,
        "\nLayout: {name}, {} ms ticks, epoch {} ({}), {} bits.\n",
        layout.tick_ms(),
        UnixMillis(layout.epoch_ms()),
        layout.epoch_ms(),
        layout.bits()
    );
    out.push_str(&assessment_table(fit));
    if fit.fits() {
        out.push_str("\nIt meets the needs.\n");
    } else {
        out.push_str("\nIt falls short:\n");
        out.push_str(&gap_lines(fit, "  "));
    }
    out
}

/// `plan`: the proposal, or the ways to fit.
fn planned(proposal: &Proposal) -> String {
    let needs = proposal.requirements();
    let mut out = requirements_line(needs);
    if let Some(fit) = proposal.proposed() {
        let layout = fit.layout();
        let _ = writeln!(
            out,
            "\nLayout: {}, {} ms ticks, epoch {} ({}).\nUse it as: {}\n",
            layout.spec(),
            layout.tick_ms(),
            UnixMillis(layout.epoch_ms()),
            layout.epoch_ms(),
            flags(fit)
        );
        out.push_str(&assessment_table(fit));
        let _ = writeln!(
            out,
            "\nIt runs out at {}. The {} spare bit{} went one at a time to whichever of time, \
             nodes and rate had the least headroom.",
            UnixMillis(layout.runs_out_ms()),
            needs.width() as u16 - proposal.needed().total(),
            if needs.width() as u16 - proposal.needed().total() == 1 {
                ""
            } else {
                "s"
            }
        );
        return out;
    }
    let least = proposal.needed();
    let _ = writeln!(
        out,
        "\nThese needs take {} bits (time {}, node {}, sequence {}), {} more than the {} a \
         layout has.",
        least.total(),
        least.time,
        least.node,
        least.sequence,
        least.total() - u16::from(needs.width()),
        needs.width()
    );
    if proposal.alternatives().is_empty() {
        out.push_str("No one thing given up makes them fit; ask for less of several.\n");
        return out;
    }
    out.push_str("Give one thing up:\n");
    for (i, alt) in proposal.alternatives().iter().enumerate() {
        let fit = alt.assessment();
        let _ = writeln!(out, "\n{}. {}: {}", i + 1, alt.concession(), flags(fit));
        if fit.fits() {
            let _ = writeln!(
                out,
                "   meets the needs otherwise; headroom: time {}, nodes {}, rate {}",
                times(fit.time_headroom()),
                times(fit.node_headroom()),
                fit.rate_headroom().map_or_else(|| "-".to_string(), times)
            );
        } else {
            out.push_str(&gap_lines(fit, "   "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_date_is_its_start_in_utc() {
        assert_eq!(parse_date("from", "2016-05-20").unwrap(), 1463702400000);
        assert_eq!(
            parse_date("from", "2016-05-20T00:00:00Z").unwrap(),
            1463702400000
        );
        assert_eq!(parse_date("from", "1463702400000").unwrap(), 1463702400000);
        let err = parse_date("from", "2016-13-01").unwrap_err();
        assert_eq!(err.field(), Some("from"));
        assert!(
            err.to_string()
                .starts_with("from \"2016-13-01\" is not a time")
        );
    }

    #[test]
    fn headroom_reads_as_a_factor() {
        assert_eq!(times(128.0), "128x");
        assert_eq!(times(1.7423), "1.74x");
        assert_eq!(times(0.849), "0.85x");
        assert_eq!(number(4_096_000.0), "4096000");
        assert_eq!(number(2666.666), "2666.7");
    }
}

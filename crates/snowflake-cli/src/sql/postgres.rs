//! The functions in PostgreSQL's PL/pgSQL.
//!
//! Bit operators on bigint are plain 64-bit integer operations: `>>` shifts
//! arithmetically (the mask after it removes the copies of the sign bit), and
//! `<<` drops what passes the 64th bit, so a 64-bit layout's IDs come out in
//! two's complement with no overflow error. `<<`, `&` and `|` share one
//! precedence level in PostgreSQL, so every term is parenthesised.

use super::plan::{Plan, bits_of, shifted};

const PURITY: &str = "IMMUTABLE STRICT PARALLEL SAFE";

/// What timestamptz (and the date arithmetic under it) holds, in Unix ms:
/// 4714-11-24 BC (Julian day 0) to the end of 294276 AD.
const TIME_MIN_MS: i64 = -210_866_803_200_000;
const TIME_MAX_MS: i64 = 9_224_318_015_999_999;

/// The timestamptz's milliseconds since 1970, floored. Subtracting and
/// `extract` from an interval keep it exact (numeric) and free of the
/// session's time zone.
const MS_OF_TS: &str = "floor(extract(epoch FROM ts - to_timestamp(0)) * 1000)";

/// A timestamptz in messages, in UTC whatever the session's zone.
const TS_TEXT: &str = "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// The comment that opens the script, and the functions.
pub fn render(plan: &Plan) -> (String, String) {
    let zeros = vec!["0"; plan.fields.len()].join(", ");
    let examples = [
        format!("SELECT id, {}(id) FROM posts;", plan.name("time")),
        format!(
            "SELECT * FROM posts WHERE id BETWEEN {}(now() - interval '1 day') AND {}(now());",
            plan.name("min_id"),
            plan.name("max_id")
        ),
        format!("SELECT {}(now(), {zeros});", plan.name("compose")),
    ];
    let purity = [
        "Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,",
        "so they can be used in indexes, generated columns and partition bounds.",
    ];
    let header = plan.header("timestamptz", &purity, &examples);
    let mut out = String::new();
    out.push_str(&time(plan));
    for f in &plan.fields {
        out.push_str(&function(
            &format!("The {} field of an ID, 0 to {}.", f.name, f.max),
            &f.function,
            "id bigint",
            "bigint",
            &[],
            &format!(
                "{}  RETURN {};\n",
                id_check(plan),
                bits_of("id", f.shift, f.max)
            ),
        ));
    }
    out.push_str(&compose(plan));
    out.push_str(&bound(
        plan,
        "min_id",
        "The smallest ID of ts's tick.",
        None,
    ));
    out.push_str(&bound(
        plan,
        "max_id",
        "The largest ID of ts's tick.",
        Some(plan.low_mask()),
    ));
    (header, out)
}

fn function(
    doc: &str,
    name: &str,
    params: &str,
    returns: &str,
    declare: &[String],
    body: &str,
) -> String {
    let mut out = format!(
        "-- {doc}\nCREATE OR REPLACE FUNCTION {name}({params}) RETURNS {returns}\n\
         LANGUAGE plpgsql {PURITY} AS $$\n"
    );
    if !declare.is_empty() {
        out.push_str("DECLARE\n");
        for d in declare {
            out.push_str(&format!("  {d};\n"));
        }
    }
    out.push_str("BEGIN\n");
    out.push_str(body);
    out.push_str("END\n$$;\n\n");
    out
}

fn raise(condition: &str, message: &str, args: &str, code: &str) -> String {
    format!(
        "  IF {condition} THEN\n    RAISE EXCEPTION '{message}', {args}\n      USING ERRCODE = '{code}';\n  END IF;\n"
    )
}

/// Refuses IDs with bits set that the layout keeps 0; nothing to check when
/// every bigint is an ID.
fn id_check(plan: &Plan) -> String {
    match plan.id_max() {
        None => String::new(),
        Some(i64::MAX) => raise(
            "id < 0",
            &format!(
                "id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to {}",
                i64::MAX
            ),
            "id",
            "numeric_value_out_of_range",
        ),
        Some(max) => raise(
            &format!("id < 0 OR id > {max}"),
            &format!(
                "id % is out of range 0 to {max}: the layout uses {} bits",
                plan.width
            ),
            "id",
            "numeric_value_out_of_range",
        ),
    }
}

fn time(plan: &Plan) -> String {
    let units = format!("({})", bits_of("id", plan.time_shift, plan.time_max));
    let mut body = id_check(plan);
    body.push_str(&format!("  _ms := {};\n", plan.unix_ms_of(&units)));
    // Only layouts whose times reach past timestamptz need the check.
    if plan.epoch_ms < TIME_MIN_MS || plan.last_ms > TIME_MAX_MS {
        body.push_str(&raise(
            &format!("_ms < {TIME_MIN_MS} OR _ms > {TIME_MAX_MS}"),
            "id % is from Unix ms %, which timestamptz cannot hold (4714 BC to 294276 AD)",
            "id, _ms",
            "datetime_field_overflow",
        ));
    }
    // Whole days by date arithmetic, the rest as an interval of under a day:
    // exact to the millisecond over the whole range (an interval of many
    // years in milliseconds goes through floating point), and no time zone
    // rules, as timestamptz + interval would apply.
    body.push_str(
        "  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;\n\
         \x20 RETURN ((date '1970-01-01' + _days::integer)\n\
         \x20   + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';\n",
    );
    function(
        "The time of an ID: the start of its tick.",
        &plan.name("time"),
        "id bigint",
        "timestamptz",
        &["_ms bigint".into(), "_days bigint".into()],
        &body,
    )
}

/// `_ms` from `ts`, refused outside the layout's times; a limit past what
/// timestamptz holds needs no check.
fn time_check(plan: &Plan) -> String {
    let mut out = String::new();
    if plan.epoch_ms > TIME_MIN_MS {
        out.push_str(&raise(
            &format!("_ms < {}", plan.epoch_ms),
            &format!(
                "ts % is before the layout''s epoch, {}",
                snowflake::UnixMillis(plan.epoch_ms)
            ),
            TS_TEXT,
            "datetime_field_overflow",
        ));
    }
    if plan.last_ms < TIME_MAX_MS {
        out.push_str(&raise(
            &format!("_ms > {}", plan.last_ms),
            &format!(
                "ts % is after the last time the layout can encode, {}",
                snowflake::UnixMillis(plan.last_ms)
            ),
            TS_TEXT,
            "datetime_field_overflow",
        ));
    }
    out
}

fn units_shifted(plan: &Plan) -> String {
    shifted(&plan.units_of("_ms", "/"), plan.time_shift)
}

fn compose(plan: &Plan) -> String {
    let mut params = vec!["ts timestamptz".to_owned()];
    let mut body = time_check(plan);
    let mut terms = vec![units_shifted(plan)];
    for f in &plan.fields {
        let param = format!("\"{}\"", f.name);
        params.push(format!("{param} bigint"));
        body.push_str(&raise(
            &format!("{param} < 0 OR {param} > {}", f.max),
            &format!(
                "{} % is out of range 0 to {} ({} bits)",
                f.name, f.max, f.bits
            ),
            &param,
            "numeric_value_out_of_range",
        ));
        terms.push(shifted(&param, f.shift));
    }
    body.push_str(&format!("  RETURN {};\n", terms.join(" | ")));
    function(
        "The ID of a time (floored to the tick) and field values.",
        &plan.name("compose"),
        &params.join(", "),
        "bigint",
        &[format!("_ms bigint := {MS_OF_TS}")],
        &body,
    )
}

fn bound(plan: &Plan, what: &str, doc: &str, low_mask: Option<u64>) -> String {
    let mut body = time_check(plan);
    match low_mask {
        Some(mask) => body.push_str(&format!("  RETURN {} | {mask};\n", units_shifted(plan))),
        None => body.push_str(&format!("  RETURN {};\n", units_shifted(plan))),
    }
    function(
        doc,
        &plan.name(what),
        "ts timestamptz",
        "bigint",
        &[format!("_ms bigint := {MS_OF_TS}")],
        &body,
    )
}

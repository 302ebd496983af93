//! The functions in MySQL's and MariaDB's stored-routine SQL.
//!
//! Bit operators work on unsigned 64-bit integers there: a negative BIGINT
//! enters as its two's complement and a result past `i64::MAX` leaves
//! through `CAST(… AS SIGNED)`, which reinterprets the bits. Each function is
//! dropped and created rather than `CREATE OR REPLACE`d, which MySQL does
//! not accept for functions. Bodies hold several statements, hence the
//! `DELIMITER` lines that the `mysql` and `mariadb` clients read.

use super::plan::{Plan, bits_of, shifted};

const PURITY: &str = "DETERMINISTIC NO SQL";

/// What DATETIME holds, in Unix ms: 1000-01-01 to 9999-12-31 23:59:59.999.
const TIME_MIN_MS: i64 = -30_610_224_000_000;
const TIME_MAX_MS: i64 = 253_402_300_799_999;

/// DATETIME has no zone; these functions treat it as UTC.
const UNIX_EPOCH: &str = "TIMESTAMP'1970-01-01 00:00:00'";

/// Signalled messages are cut at 128 characters, so they stay short.
const SIGNAL: &str = "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg";

/// The comment that opens the script, and the functions.
pub fn render(plan: &Plan) -> (String, String) {
    let zeros = vec!["0"; plan.fields.len()].join(", ");
    let examples = [
        format!("SELECT id, {}(id) FROM posts;", plan.name("time")),
        format!(
            "SELECT * FROM posts WHERE id BETWEEN {}(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND {}(UTC_TIMESTAMP(3));",
            plan.name("min_id"),
            plan.name("max_id")
        ),
        format!(
            "SELECT {}(UTC_TIMESTAMP(3), {zeros});",
            plan.name("compose")
        ),
    ];
    let purity = [
        "Pure functions, with no state and no table: DETERMINISTIC NO SQL, so binary",
        "logging accepts them and a call with constants is worked out once. MySQL and",
        "MariaDB allow no stored function in generated columns or partition bounds:",
        "there, write the number a function gives (SELECT ..._min_id('2025-01-01')).",
        "DATETIME has no time zone: these functions read and write UTC.",
    ];
    let header = plan.header("DATETIME(3)", &purity, &examples);
    let mut out = String::new();
    out.push_str("DELIMITER //\n\n");
    out.push_str(&time(plan));
    for f in &plan.fields {
        out.push_str(&function(
            &format!("The {} field of an ID, 0 to {}.", f.name, f.max),
            &f.function,
            "id BIGINT",
            "BIGINT",
            "",
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
    out.push_str("DELIMITER ;\n");
    (header, out)
}

/// `ms` is how `_ms` is declared after its type (empty: not at all).
fn function(doc: &str, name: &str, params: &str, returns: &str, ms: &str, body: &str) -> String {
    let mut out = format!(
        "-- {doc}\nDROP FUNCTION IF EXISTS {name}//\n\
         CREATE FUNCTION {name}({params}) RETURNS {returns}\n  {PURITY}\nBEGIN\n"
    );
    if !ms.is_empty() {
        out.push_str(&format!("  DECLARE _ms BIGINT{ms};\n"));
    }
    if body.contains("_msg") {
        out.push_str("  DECLARE _msg VARCHAR(128);\n");
    }
    out.push_str(body);
    out.push_str("END//\n\n");
    out
}

/// `message` is an SQL expression (SIGNAL takes no expression, so it goes
/// through `_msg`).
fn raise(condition: &str, message: &str) -> String {
    format!("  IF {condition} THEN\n    SET _msg = {message};\n    {SIGNAL};\n  END IF;\n")
}

fn id_check(plan: &Plan) -> String {
    match plan.id_max() {
        None => String::new(),
        Some(i64::MAX) => raise(
            "id < 0",
            "CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0')",
        ),
        Some(max) => raise(
            &format!("id < 0 OR id > {max}"),
            &format!(
                "CONCAT('id ', id, ' is out of range 0 to {max}: the layout uses {} bits')",
                plan.width
            ),
        ),
    }
}

fn datetime_text(ms: i64) -> String {
    // 2010-11-04T01:42:54.657Z as DATETIME(3) prints it.
    snowflake::UnixMillis(ms)
        .to_string()
        .replace('T', " ")
        .replace('Z', "")
}

fn time(plan: &Plan) -> String {
    let units = format!(
        "CAST({} AS SIGNED)",
        bits_of("id", plan.time_shift, plan.time_max)
    );
    let mut body = id_check(plan);
    body.push_str(&format!("  SET _ms = {};\n", plan.unix_ms_of(&units)));
    // Only layouts whose times reach past DATETIME need the check (mastodon's
    // run to the year 10889).
    if plan.epoch_ms < TIME_MIN_MS || plan.last_ms > TIME_MAX_MS {
        body.push_str(&raise(
            &format!("_ms < {TIME_MIN_MS} OR _ms > {TIME_MAX_MS}"),
            "CONCAT('id ', id, ' is from Unix ms ', _ms, ', which DATETIME cannot hold (years 1000 to 9999)')",
        ));
    }
    body.push_str(&format!(
        "  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, {UNIX_EPOCH});\n"
    ));
    // `_ms` is set after the ID check, so it starts without a value.
    function(
        "The time of an ID, in UTC: the start of its tick.",
        &plan.name("time"),
        "id BIGINT",
        "DATETIME(3)",
        " DEFAULT NULL",
        &body,
    )
}

/// `_ms` as the Unix milliseconds of `ts`; exact, as DATETIME(3) holds
/// whole milliseconds.
fn ms_of_ts() -> String {
    format!(" DEFAULT TIMESTAMPDIFF(MICROSECOND, {UNIX_EPOCH}, ts) DIV 1000")
}

/// `_ms` from `ts`, refused outside the layout's times; a limit past what
/// DATETIME holds needs no check.
fn time_check(plan: &Plan) -> String {
    let mut out = String::new();
    if plan.epoch_ms > TIME_MIN_MS {
        out.push_str(&raise(
            &format!("_ms < {}", plan.epoch_ms),
            &format!(
                "CONCAT('ts ', ts, ' is before the layout''s epoch, {}')",
                datetime_text(plan.epoch_ms)
            ),
        ));
    }
    if plan.last_ms < TIME_MAX_MS {
        out.push_str(&raise(
            &format!("_ms > {}", plan.last_ms),
            &format!(
                "CONCAT('ts ', ts, ' is after the last time the layout can encode, {}')",
                datetime_text(plan.last_ms)
            ),
        ));
    }
    out
}

fn units_shifted(plan: &Plan) -> String {
    shifted(&plan.units_of("_ms", "DIV"), plan.time_shift)
}

fn compose(plan: &Plan) -> String {
    let mut params = vec!["ts DATETIME(3)".to_owned()];
    let mut body = time_check(plan);
    let mut terms = vec![units_shifted(plan)];
    for f in &plan.fields {
        let param = format!("`{}`", f.name);
        params.push(format!("{param} BIGINT"));
        body.push_str(&raise(
            &format!("{param} < 0 OR {param} > {}", f.max),
            &format!(
                "CONCAT('{} ', {param}, ' is out of range 0 to {} ({} bits)')",
                f.name, f.max, f.bits
            ),
        ));
        terms.push(shifted(&param, f.shift));
    }
    body.push_str(&format!(
        "  RETURN CAST({} AS SIGNED);\n",
        terms.join(" | ")
    ));
    function(
        "The ID of a time in UTC (floored to the tick) and field values.",
        &plan.name("compose"),
        &params.join(", "),
        "BIGINT",
        &ms_of_ts(),
        &body,
    )
}

fn bound(plan: &Plan, what: &str, doc: &str, low_mask: Option<u64>) -> String {
    let mut body = time_check(plan);
    let id = match low_mask {
        Some(mask) => format!("{} | {mask}", units_shifted(plan)),
        None => units_shifted(plan),
    };
    body.push_str(&format!("  RETURN CAST({id} AS SIGNED);\n"));
    function(
        doc,
        &plan.name(what),
        "ts DATETIME(3)",
        "BIGINT",
        &ms_of_ts(),
        &body,
    )
}

//! PostgreSQL: the read functions in PL/pgSQL and partitions by ID range;
//! the generator is in `postgres/generator.rs`.
//!
//! Bit operators on bigint are plain 64-bit integer operations: `>>` shifts
//! arithmetically (the mask after it removes the copies of the sign bit), and
//! `<<` drops what passes the 64th bit, so a 64-bit layout's IDs come out in
//! two's complement with no overflow error. `<<`, `&` and `|` share one
//! precedence level in PostgreSQL, so every term is parenthesised.

mod generator;

use super::database::{
    Capabilities, Database, Function, FunctionsSql, Locals, Partition, PartitionsSql, Refusal,
    Table, Words,
};
use super::layout::{SqlLayout, bits_of};

/// PostgreSQL's dialect.
#[derive(Debug)]
pub struct Postgres;

const CAPABILITIES: Capabilities = Capabilities {
    name: "PostgreSQL",
    // What timestamptz (and the date arithmetic under it) holds, in Unix ms:
    // 4714-11-24 BC (Julian day 0) to the end of 294276 AD.
    time_range_ms: -210_866_803_200_000..=9_224_318_015_999_999,
    zoned_time: true,
    routine_delimiter: None,
    bounded_partitions: true,
    max_partitions: None,
};

impl Database for Postgres {
    fn capabilities(&self) -> &'static Capabilities {
        &CAPABILITIES
    }
}

const PURITY: &str = "IMMUTABLE STRICT PARALLEL SAFE";

/// The timestamptz's milliseconds since 1970, floored. Subtracting and
/// `extract` from an interval keep it exact (numeric) and free of the
/// session's time zone.
const MS_OF_TS: &str = "floor(extract(epoch FROM ts - to_timestamp(0)) * 1000)";

/// A timestamptz in messages, in UTC whatever the session's zone.
const TS_TEXT: &str = "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// Whole days by date arithmetic, the rest as an interval of under a day:
/// exact to the millisecond over the whole range (an interval of many years
/// in milliseconds goes through floating point), and no time zone rules, as
/// timestamptz + interval would apply.
const TIME_OF_MS: &str =
    "  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
";

const WORDS: Words = Words {
    int: "bigint",
    time: "timestamptz",
    div: "/",
    now: "now()",
    a_day_ago: "now() - interval '1 day'",
    purity: &[
        "Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,",
        "so they can be used in indexes, generated columns and partition bounds.",
    ],
};

impl FunctionsSql for Postgres {
    fn words(&self) -> &'static Words {
        &WORDS
    }

    fn param(&self, name: &str) -> String {
        format!("\"{name}\"")
    }

    fn signed(&self, bits: &str) -> String {
        bits.to_owned()
    }

    fn ms_of_id(&self, layout: &SqlLayout) -> String {
        let units = format!("({})", bits_of("id", layout.time_shift, layout.time_max));
        format!("  _ms := {};\n", layout.unix_ms_of(&units))
    }

    fn time_of_ms(&self) -> String {
        TIME_OF_MS.to_owned()
    }

    fn raise(&self, condition: &str, refusal: Refusal) -> String {
        let (message, args, code) = match refusal {
            Refusal::NegativeId => (
                format!(
                    "id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to {}",
                    i64::MAX
                ),
                "id",
                "numeric_value_out_of_range",
            ),
            Refusal::IdOutOfRange { max, width } => (
                format!("id % is out of range 0 to {max}: the layout uses {width} bits"),
                "id",
                "numeric_value_out_of_range",
            ),
            Refusal::TimeOutsideType => (
                "id % is from Unix ms %, which timestamptz cannot hold (4714 BC to 294276 AD)"
                    .into(),
                "id, _ms",
                "datetime_field_overflow",
            ),
            Refusal::BeforeEpoch { epoch_ms } => (
                format!(
                    "ts % is before the layout''s epoch, {}",
                    snowflake::UnixMillis(epoch_ms)
                ),
                TS_TEXT,
                "datetime_field_overflow",
            ),
            Refusal::AfterLast { last_ms } => (
                format!(
                    "ts % is after the last time the layout can encode, {}",
                    snowflake::UnixMillis(last_ms)
                ),
                TS_TEXT,
                "datetime_field_overflow",
            ),
            Refusal::FieldOutOfRange { field, param } => (
                format!(
                    "{} % is out of range 0 to {} ({} bits)",
                    field.name, field.max, field.bits
                ),
                param,
                "numeric_value_out_of_range",
            ),
        };
        format!(
            "  IF {condition} THEN\n    RAISE EXCEPTION '{message}', {args}\n      USING ERRCODE = '{code}';\n  END IF;\n"
        )
    }

    fn function(&self, f: &Function) -> String {
        let mut out = format!(
            "-- {}\nCREATE OR REPLACE FUNCTION {}({}) RETURNS {}\n\
             LANGUAGE plpgsql {PURITY} AS $$\n",
            f.doc, f.name, f.params, f.returns
        );
        let locals = match f.locals {
            Locals::None => vec![],
            Locals::TimeOfId => vec!["_ms bigint".to_owned(), "_days bigint".to_owned()],
            Locals::MsOfTs => vec![format!("_ms bigint := {MS_OF_TS}")],
        };
        if !locals.is_empty() {
            out.push_str("DECLARE\n");
            for local in locals {
                out.push_str(&format!("  {local};\n"));
            }
        }
        out.push_str("BEGIN\n");
        out.push_str(f.body);
        out.push_str("END\n$$;\n\n");
        out
    }
}

impl PartitionsSql for Postgres {
    fn partitions(&self, table: &Table, partitions: &[Partition]) -> String {
        let Table {
            written,
            schema,
            name,
        } = table;
        let mut out = format!(
            "-- {written} must be partitioned by its ID, as in\n\
             --   CREATE TABLE {written} (id bigint NOT NULL, ...) PARTITION BY RANGE (id);\n\
             -- An ID outside the periods has no partition and is refused; to keep such rows, add\n\
             --   CREATE TABLE {written}_default PARTITION OF {written} DEFAULT;\n\
             -- Partitions that exist are kept: run again with a later --to to add periods.\n\n",
        );
        for p in partitions {
            out.push_str(&format!(
                "CREATE TABLE IF NOT EXISTS {schema}{name}_p{} PARTITION OF {written}\n\
                 \x20 FOR VALUES FROM ({}) TO ({});  -- {}\n",
                p.suffix, p.from, p.to, p.label,
            ));
        }
        out
    }
}

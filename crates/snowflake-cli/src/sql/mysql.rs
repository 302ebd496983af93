//! MySQL and MariaDB: the read functions as stored routines and partitions
//! by ID range; the generator is in `mysql/generator.rs`.
//!
//! Bit operators work on unsigned 64-bit integers there: a negative BIGINT
//! enters as its two's complement and a result past `i64::MAX` leaves
//! through `CAST(… AS SIGNED)`, which reinterprets the bits. Each function is
//! dropped and created rather than `CREATE OR REPLACE`d, which MySQL does
//! not accept for functions. Bodies hold several statements, hence the
//! `DELIMITER` lines that the `mysql` and `mariadb` clients read.

mod generator;

use super::database::{
    Capabilities, Database, Function, FunctionsSql, Locals, Partition, PartitionsSql, Refusal,
    Table, Words,
};
use super::layout::{SqlLayout, bits_of};

/// The dialect of MySQL and MariaDB.
#[derive(Debug)]
pub struct Mysql;

/// What ends a statement between the `DELIMITER` lines.
const DELIMITER: &str = "//";

const CAPABILITIES: Capabilities = Capabilities {
    name: "MySQL and MariaDB",
    // What DATETIME holds, in Unix ms: 1000-01-01 to 9999-12-31 23:59:59.999.
    time_range_ms: -30_610_224_000_000..=253_402_300_799_999,
    zoned_time: false,
    routine_delimiter: Some(DELIMITER),
    bounded_partitions: false,
    max_partitions: Some(8192),
};

impl Database for Mysql {
    fn capabilities(&self) -> &'static Capabilities {
        &CAPABILITIES
    }
}

const PURITY: &str = "DETERMINISTIC NO SQL";

/// DATETIME has no zone; these functions treat it as UTC.
const UNIX_EPOCH: &str = "TIMESTAMP'1970-01-01 00:00:00'";

/// Signalled messages are cut at 128 characters, so they stay short.
const SIGNAL: &str = "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg";

/// A time as DATETIME(3) prints it: 2010-11-04 01:42:54.657.
fn datetime_text(ms: i64) -> String {
    snowflake::UnixMillis(ms)
        .to_string()
        .replace('T', " ")
        .replace('Z', "")
}

const WORDS: Words = Words {
    int: "BIGINT",
    time: "DATETIME(3)",
    div: "DIV",
    now: "UTC_TIMESTAMP(3)",
    a_day_ago: "UTC_TIMESTAMP(3) - INTERVAL 1 DAY",
    purity: &[
        "Pure functions, with no state and no table: DETERMINISTIC NO SQL, so binary",
        "logging accepts them and a call with constants is worked out once. MySQL and",
        "MariaDB allow no stored function in generated columns or partition bounds:",
        "there, write the number a function gives (SELECT ..._min_id('2025-01-01')).",
        "DATETIME has no time zone: these functions read and write UTC.",
    ],
};

impl FunctionsSql for Mysql {
    fn words(&self) -> &'static Words {
        &WORDS
    }

    fn param(&self, name: &str) -> String {
        format!("`{name}`")
    }

    fn signed(&self, bits: &str) -> String {
        format!("CAST({bits} AS SIGNED)")
    }

    fn ms_of_id(&self, layout: &SqlLayout) -> String {
        let units = self.signed(&bits_of("id", layout.time_shift, layout.time_max));
        format!("  SET _ms = {};\n", layout.unix_ms_of(&units))
    }

    fn time_of_ms(&self) -> String {
        format!("  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, {UNIX_EPOCH});\n")
    }

    /// The message is an SQL expression (SIGNAL takes no expression, so it
    /// goes through `_msg`).
    fn raise(&self, condition: &str, refusal: Refusal) -> String {
        let message = match refusal {
            Refusal::NegativeId => {
                "CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0')".into()
            }
            Refusal::IdOutOfRange { max, width } => format!(
                "CONCAT('id ', id, ' is out of range 0 to {max}: the layout uses {width} bits')"
            ),
            Refusal::TimeOutsideType => "CONCAT('id ', id, ' is from Unix ms ', _ms, \
                 ', which DATETIME cannot hold (years 1000 to 9999)')"
                .into(),
            Refusal::BeforeEpoch { epoch_ms } => format!(
                "CONCAT('ts ', ts, ' is before the layout''s epoch, {}')",
                datetime_text(epoch_ms)
            ),
            Refusal::AfterLast { last_ms } => format!(
                "CONCAT('ts ', ts, ' is after the last time the layout can encode, {}')",
                datetime_text(last_ms)
            ),
            Refusal::FieldOutOfRange { field, param } => format!(
                "CONCAT('{} ', {param}, ' is out of range 0 to {} ({} bits)')",
                field.name, field.max, field.bits
            ),
        };
        format!("  IF {condition} THEN\n    SET _msg = {message};\n    {SIGNAL};\n  END IF;\n")
    }

    fn function(&self, f: &Function) -> String {
        let mut out = format!(
            "-- {}\nDROP FUNCTION IF EXISTS {name}{DELIMITER}\n\
             CREATE FUNCTION {name}({}) RETURNS {}\n  {PURITY}\nBEGIN\n",
            f.doc,
            f.params,
            f.returns,
            name = f.name,
        );
        match f.locals {
            Locals::None => {}
            // Set after the ID check, so it starts without a value.
            Locals::TimeOfId => out.push_str("  DECLARE _ms BIGINT DEFAULT NULL;\n"),
            // Exact, as DATETIME(3) holds whole milliseconds.
            Locals::MsOfTs => out.push_str(&format!(
                "  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, {UNIX_EPOCH}, ts) DIV 1000;\n"
            )),
        }
        if f.body.contains("_msg") {
            out.push_str("  DECLARE _msg VARCHAR(128);\n");
        }
        out.push_str(f.body);
        out.push_str(&format!("END{DELIMITER}\n\n"));
        out
    }
}

impl PartitionsSql for Mysql {
    fn partitions(&self, table: &Table, partitions: &[Partition]) -> String {
        let table = table.written;
        let first = &partitions[0];
        let mut out = format!(
            "-- MySQL and MariaDB partition a table in one statement, which copies its rows. A\n\
             -- range partition has no lower bound, so p_before holds the IDs before the\n\
             -- first period; an ID after the last has no partition and is refused. To add\n\
             -- periods later: ALTER TABLE {table} ADD PARTITION (PARTITION ... VALUES LESS THAN (...)).\n\
             -- Every unique key of {table} must include id.\n\n\
             ALTER TABLE {table} PARTITION BY RANGE (id) (\n\
             \x20 PARTITION p_before VALUES LESS THAN ({}),  -- before {}\n",
            first.from, first.label,
        );
        for (i, p) in partitions.iter().enumerate() {
            let comma = if i + 1 == partitions.len() { "" } else { "," };
            out.push_str(&format!(
                "  PARTITION p{} VALUES LESS THAN ({}){comma}  -- {}\n",
                p.suffix, p.to, p.label,
            ));
        }
        out.push_str(");\n");
        out
    }
}

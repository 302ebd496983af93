//! `snowflake sql`: SQL for a layout's IDs inside PostgreSQL or MySQL/MariaDB,
//! so that people stop hand-writing bit shifts. Pure text out of a layout,
//! in plain SQL and stored routines (managed databases allow no extensions):
//!
//! - functions that read and build IDs, pure (usable in indexes and
//!   partition bounds);
//! - with `--generator`, `<prefix>_next_id()`, which issues new IDs from
//!   state kept in the database;
//! - with `--partitions`, partitions of a table by ID range.
//!
//! The numbers and names come from one [`Plan`](plan::Plan) derived from the
//! layout (and a [`NextId`](generator::NextId) for the generator); each
//! dialect only spells them.

mod generator;
mod mysql;
mod mysql_generator;
mod partitions;
mod plan;
mod postgres;
mod postgres_generator;

use snowflake::{Error, Layout};
use snowflake_io::parse_fields;

use generator::NextId;
pub use partitions::Periods;
use plan::Plan;

/// Which database the functions are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    /// PostgreSQL: `timestamptz`, PL/pgSQL, IMMUTABLE PARALLEL SAFE.
    Postgres,
    /// MySQL and MariaDB: `DATETIME(3)` in UTC, DETERMINISTIC NO SQL.
    Mysql,
}

/// How long each partition's period is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Period {
    /// A day, from midnight.
    Day,
    /// A week, from Monday's midnight.
    Week,
    /// A calendar month, from the first's midnight.
    Month,
}

/// What `snowflake sql` is asked for, as the command line gives it.
#[derive(Debug)]
pub struct Request<'a> {
    pub dialect: Dialect,
    pub prefix: Option<&'a str>,
    pub generator: bool,
    /// Field values by name, as text: the generator's node.
    pub node: Vec<(&'a str, &'a str)>,
    /// Partitions instead of functions.
    pub partitions: Option<Periods<'a>>,
}

/// The script `snowflake sql` prints.
pub fn script(layout: &Layout, request: &Request) -> Result<String, Error> {
    if !request.generator
        && let Some((name, value)) = request.node.first()
    {
        return Err(Error::invalid_value(
            "field",
            &format!("{name}={value}"),
            "field values set the node of a generator: add --generator",
        ));
    }
    if let Some(periods) = &request.partitions {
        return partitions::render(layout, request.dialect, periods);
    }
    let node = match request.generator {
        true => Some(parse_fields(layout, &request.node)?),
        false => None,
    };
    functions(layout, request.dialect, request.prefix, node.as_deref())
}

/// The prefix of every function name when none is given: a preset's name,
/// or `snowflake` for a custom layout (a preset with another epoch or tick
/// is a custom layout too: its functions must not pass for the preset's).
pub fn default_prefix(layout: &Layout) -> String {
    match Layout::preset(&layout.name()) {
        Some(preset) if &preset == layout => preset.name().into_owned(),
        _ => String::from("snowflake"),
    }
}

/// The longest prefix accepted. Each function's whole name is checked too:
/// PostgreSQL allows 63 characters.
pub const MAX_PREFIX: usize = 40;

/// Checks a prefix: it is written into SQL unquoted, so only letters, digits
/// and `_`, starting with a letter.
pub fn check_prefix(prefix: &str) -> Result<(), Error> {
    let ok = (1..=MAX_PREFIX).contains(&prefix.len())
        && prefix.starts_with(|c: char| c.is_ascii_alphabetic())
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        return Ok(());
    }
    Err(Error::invalid_value(
        "prefix",
        &format!("{prefix:?}"),
        "a prefix is 1 to 40 characters of letters, digits and _, starting with a letter",
    ))
}

/// The `CREATE FUNCTION` statements for `layout` in `dialect`, as one script;
/// with `node`, a generator of IDs with those node values after them.
pub fn functions(
    layout: &Layout,
    dialect: Dialect,
    prefix: Option<&str>,
    node: Option<&[(&str, u64)]>,
) -> Result<String, Error> {
    let prefix = match prefix {
        Some(prefix) => {
            check_prefix(prefix)?;
            prefix.to_owned()
        }
        None => default_prefix(layout),
    };
    let plan = Plan::new(layout, prefix)?;
    let next = node
        .map(|node| NextId::new(layout, &plan, node))
        .transpose()?;
    let (header, functions) = match dialect {
        Dialect::Postgres => postgres::render(&plan),
        Dialect::Mysql => mysql::render(&plan),
    };
    let Some(next) = &next else {
        return Ok(header + &functions);
    };
    // The generator's checks come first, so that a generator refused
    // (another's node, another layout under its prefix) changes nothing.
    let (before, after) = match dialect {
        Dialect::Postgres => postgres_generator::render(&plan, next),
        Dialect::Mysql => mysql_generator::render(&plan, next),
    };
    Ok(header + &before + &functions + &after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(layout: &str, prefix: Option<&str>) -> Error {
        let layout = Layout::parse(layout).unwrap();
        match functions(&layout, Dialect::Postgres, prefix, None) {
            Ok(_) => panic!("{layout} with prefix {prefix:?} was accepted"),
            Err(err) => err,
        }
    }

    #[test]
    fn prefixes_are_safe_identifiers() {
        for good in ["a", "twitter", "Posts_2", "x_", &"p".repeat(40)] {
            assert!(check_prefix(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "1abc",
            "_abc",
            "a-b",
            "a b",
            "a;DROP TABLE x",
            "ä",
            "a\"b",
            &"p".repeat(41),
        ] {
            let err = check_prefix(bad).unwrap_err();
            assert_eq!(err.field(), Some("prefix"), "{bad}");
            assert_eq!(err.kind(), snowflake::ErrorKind::InvalidInput);
            let message = err.to_string();
            assert!(message.contains(&format!("{bad:?}")), "{message}");
            assert!(message.contains("letters, digits and _"), "{message}");
        }
    }

    #[test]
    fn a_bad_prefix_is_refused_before_any_sql() {
        let err = refusal("twitter", Some("9lives"));
        assert!(
            err.to_string()
                .starts_with("prefix \"9lives\" is not allowed")
        );
    }

    #[test]
    fn default_prefix_is_the_preset_or_snowflake() {
        assert_eq!(default_prefix(&Layout::twitter()), "twitter");
        assert_eq!(default_prefix(&Layout::sonyflake()), "sonyflake");
        let moved = Layout::twitter().with_epoch_ms(0).unwrap();
        assert_eq!(default_prefix(&moved), "snowflake");
        let custom = Layout::parse("time:41,node:10,sequence:12").unwrap();
        assert_eq!(default_prefix(&custom), "snowflake");
        let sql = functions(&custom, Dialect::Mysql, None, None).unwrap();
        assert!(sql.contains("CREATE FUNCTION snowflake_node(id BIGINT)"));
    }

    #[test]
    fn field_names_that_clash_with_the_functions_are_refused() {
        for (spec, field) in [
            ("time:41,compose:10,sequence:12", "compose"),
            ("time:41,min_id:10,sequence:12", "min_id"),
            ("time:41,max_id:10,sequence:12", "max_id"),
            ("time:41,ts:10,sequence:12", "ts"),
        ] {
            let err = refusal(spec, None);
            assert_eq!(err.field(), Some("field"), "{spec}");
            let message = err.to_string();
            assert!(message.contains(&format!("\"{field}\"")), "{message}");
            assert!(message.contains("rename"), "{message}");
        }
    }

    #[test]
    fn function_names_longer_than_postgres_allows_are_refused() {
        let long_field = "a".repeat(32);
        let spec = format!("time:41,{long_field}:10,sequence:12");
        let prefix = "p".repeat(40);
        let err = refusal(&spec, Some(&prefix));
        let message = err.to_string();
        assert_eq!(err.field(), Some("prefix"));
        assert!(
            message.contains(&format!("{prefix}_{long_field}")),
            "{message}"
        );
        assert!(message.contains("63"), "{message}");
        // 40 + 1 + 22 is 63, which fits; 64 does not.
        let fits = Layout::parse(&format!("time:41,{}:10,sequence:12", &long_field[..22])).unwrap();
        assert!(functions(&fits, Dialect::Postgres, Some(&prefix), None).is_ok());
        let over = Layout::parse(&format!("time:41,{}:10,sequence:12", &long_field[..23])).unwrap();
        assert!(functions(&over, Dialect::Mysql, Some(&prefix), None).is_err());
    }

    #[test]
    fn every_function_is_pure_and_replaceable() {
        for layout in Layout::presets() {
            let fields = layout.fields().len();
            let pg = functions(&layout, Dialect::Postgres, None, None).unwrap();
            let name = layout.name();
            // time, each field, compose, min_id, max_id
            let count = 4 + fields;
            assert_eq!(pg.matches("CREATE OR REPLACE FUNCTION").count(), count);
            let marked = "\nLANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$\n";
            assert_eq!(pg.matches(marked).count(), count);
            assert!(pg.contains(&format!("FUNCTION {name}_min_id(ts timestamptz)")));
            let my = functions(&layout, Dialect::Mysql, None, None).unwrap();
            assert_eq!(my.matches("\nCREATE FUNCTION").count(), count);
            assert_eq!(my.matches("DROP FUNCTION IF EXISTS").count(), count);
            assert_eq!(
                my.matches("\n  DETERMINISTIC NO SQL\nBEGIN\n").count(),
                count
            );
            assert!(my.contains(&format!(
                "FUNCTION {name}_time(id BIGINT) RETURNS DATETIME(3)"
            )));
            for sql in [&pg, &my] {
                assert!(!sql.to_lowercase().contains("nextval"), "no generator");
            }
        }
    }

    #[test]
    fn numbers_come_from_the_layout() {
        let sony = functions(&Layout::sonyflake(), Dialect::Postgres, None, None).unwrap();
        // machine: 16 bits at shift 0; sequence: 8 bits at shift 16; 10 ms ticks.
        assert!(sony.contains("RETURN id & 65535;"), "{sony}");
        assert!(sony.contains("RETURN (id >> 16) & 255;"), "{sony}");
        assert!(sony.contains("(_ms - 1409529600000) / 10"), "{sony}");
        assert!(sony.contains("* 10 + 1409529600000"), "{sony}");
    }

    #[test]
    fn the_comment_says_how_64_bit_ids_map_onto_bigint() {
        let discord = functions(&Layout::discord(), Dialect::Postgres, None, None).unwrap();
        assert!(discord.contains("two's complement"), "{discord}");
        // The first ID with the 64th bit: 2^41 ms after Discord's epoch.
        assert!(discord.contains("2084-09-06T15:47:35.552Z"), "{discord}");
        let twitter = functions(&Layout::twitter(), Dialect::Mysql, None, None).unwrap();
        assert!(!twitter.contains("two's complement"));
        assert!(twitter.contains("sign bit"));
    }
}

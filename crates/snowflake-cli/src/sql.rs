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
//! The numbers and names come from one [`SqlLayout`] derived from the layout
//! (and an [`SqlGenerator`] for the generator). The steps of each script are
//! written once (`functions.rs`, `generator.rs`, `partitions.rs`); each
//! dialect only spells them, as a [`Database`] that also
//! says what the database can do. A new dialect is a module of its own and
//! a variant of [`Dialect`].

mod database;
mod functions;
mod generator;
mod layout;
mod mysql;
mod partitions;
mod postgres;

use snowflake::Layout;
use snowflake_io::parse_fields;

use crate::failure::Failure;
use crate::usage::UsageError;
use database::Database;
use generator::SqlGenerator;
use layout::SqlLayout;
pub use partitions::Periods;

/// Which database the functions are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    /// PostgreSQL: `timestamptz`, PL/pgSQL, IMMUTABLE PARALLEL SAFE.
    Postgres,
    /// MySQL and MariaDB: `DATETIME(3)` in UTC, DETERMINISTIC NO SQL.
    Mysql,
}

impl Dialect {
    /// The database this dialect is written for, what it can do and how it
    /// spells the scripts: the one place that tells the dialects apart.
    fn database(self) -> &'static dyn Database {
        match self {
            Dialect::Postgres => &postgres::Postgres,
            Dialect::Mysql => &mysql::Mysql,
        }
    }
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
pub fn script(layout: &Layout, request: &Request) -> Result<String, Failure> {
    if !request.generator
        && let Some((name, value)) = request.node.first()
    {
        return Err(UsageError::new(
            "field",
            &format!("{name}={value}"),
            "field values set the node of a generator: add --generator",
        )
        .into());
    }
    if let Some(periods) = &request.partitions {
        return Ok(partitions::render(
            layout,
            request.dialect.database(),
            periods,
        )?);
    }
    let node = match request.generator {
        true => Some(parse_fields(layout, &request.node)?),
        false => None,
    };
    functions(layout, request.dialect, request.prefix, node.as_deref())
}

/// The `CREATE FUNCTION` statements for `layout` in `dialect`, as one script;
/// with `node`, a generator of IDs with those node values after them.
pub fn functions(
    layout: &Layout,
    dialect: Dialect,
    prefix: Option<&str>,
    node: Option<&[(&str, u64)]>,
) -> Result<String, Failure> {
    let db = dialect.database();
    let names = SqlLayout::new(layout, prefix)?;
    let (header, functions) = functions::render(db, &names);
    let Some(node) = node else {
        return Ok(header + &functions);
    };
    let generator = SqlGenerator::new(layout, &names, node)?;
    // The generator's checks come first, so that a generator refused
    // (another's node, another layout under its prefix) changes nothing.
    let (before, after) = generator::render(db, &names, &generator);
    Ok(header + &before + &functions + &after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_values_without_a_generator_are_refused() {
        let request = Request {
            dialect: Dialect::Mysql,
            prefix: None,
            generator: false,
            node: vec![("machine", "1")],
            partitions: None,
        };
        match script(&Layout::twitter(), &request) {
            Err(Failure::Argument(err)) => {
                assert_eq!(err.field(), "field");
                assert!(err.to_string().contains("add --generator"), "{err}");
            }
            other => panic!("{other:?}"),
        }
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

//! What a database must give the scripts, as one trait per script and one
//! [`Database`] that holds them with the database's [`Capabilities`].
//!
//! # Design
//!
//! The scripts are written in steps that are the same in every dialect:
//! which functions there are, which checks each makes and in what order,
//! what the generator's install does first and last, which partitions there
//! are. Those steps live once, in `functions.rs`, `generator.rs` and
//! `partitions.rs`; a dialect only spells them, through these traits. What
//! a database can or cannot do, where the steps depend on it, is a value in
//! [`Capabilities`] rather than a `match` on the dialect.
//!
//! The generator's guarantees are not capabilities to do without: every
//! implementation of [`GeneratorSql`] gives all of them, each in its own
//! database's means. The function runs with its owner's rights; its state
//! is kept where a rollback cannot take it back and no other role can touch
//! it; callers take turns under a lock that no other role can hold; one
//! install runs at a time; an install beside a generator whose IDs could be
//! equal is refused; and the function refuses to issue where a replica
//! would make other IDs. `tests/sql/hostile.rs` attacks each, in both
//! databases.

use std::ops::RangeInclusive;

use super::generator::SqlGenerator;
use super::layout::{SqlField, SqlLayout};

/// What a database can do, where the scripts depend on it.
#[derive(Debug)]
pub struct Capabilities {
    /// The database's name in messages, as a plural subject where it names
    /// two: "MySQL and MariaDB allow ...".
    pub name: &'static str,
    /// The Unix milliseconds that the time type holds: outside them, the
    /// functions refuse a time rather than let the database fail or wrap.
    pub time_range_ms: RangeInclusive<i64>,
    /// Whether the time type carries a time zone; without one, the
    /// functions read and write UTC, and say so.
    pub zoned_time: bool,
    /// The statement delimiter that a client must switch to around bodies
    /// of several statements (MySQL's `DELIMITER //`), if any.
    pub routine_delimiter: Option<&'static str>,
    /// Whether a range partition has a lower bound; without one, the first
    /// partition also holds every ID before the first period.
    pub bounded_partitions: bool,
    /// The most partitions a table can have, if the database sets a limit.
    pub max_partitions: Option<usize>,
}

/// One database's dialect: its capabilities and how it spells each script.
pub trait Database: FunctionsSql + GeneratorSql + PartitionsSql {
    fn capabilities(&self) -> &'static Capabilities;
}

/// One function of the script, in the words of no dialect yet.
#[derive(Debug)]
pub struct Function<'a> {
    /// What it gives, for the comment before it.
    pub doc: &'a str,
    pub name: &'a str,
    pub params: &'a str,
    pub returns: &'a str,
    /// Which local variables its body uses.
    pub locals: Locals,
    pub body: &'a str,
}

/// The local variables of a function's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locals {
    None,
    /// `_ms`, set from an ID's time by [`FunctionsSql::ms_of_id`], and what
    /// [`FunctionsSql::time_of_ms`] needs.
    TimeOfId,
    /// `_ms`, the Unix milliseconds of the parameter `ts`.
    MsOfTs,
}

/// Why a function refuses its input: each dialect words the error.
#[derive(Debug, Clone, Copy)]
pub enum Refusal<'a> {
    /// `id` is negative, and the layout keeps its sign bit 0.
    NegativeId,
    /// `id` has bits set above the `width` that the layout uses.
    IdOutOfRange { max: i64, width: u8 },
    /// `id`'s time, `_ms`, is outside what the time type holds.
    TimeOutsideType,
    /// `ts` is before the layout's epoch, `epoch_ms`.
    BeforeEpoch { epoch_ms: i64 },
    /// `ts` is after the last time the layout can encode, `last_ms`.
    AfterLast { last_ms: i64 },
    /// The parameter `param` of `field` is out of its range.
    FieldOutOfRange { field: &'a SqlField, param: &'a str },
}

/// The words a dialect writes the read functions with.
#[derive(Debug)]
pub struct Words {
    /// The type of an ID: a signed 64-bit integer.
    pub int: &'static str,
    /// The type of a time.
    pub time: &'static str,
    /// Integer division, rounding down for what it divides here.
    pub div: &'static str,
    /// The time now, and a day before it, for the examples.
    pub now: &'static str,
    pub a_day_ago: &'static str,
    /// The lines of the script's comment that say how the functions are
    /// marked pure and what that allows.
    pub purity: &'static [&'static str],
}

/// How a dialect spells the read functions (time, fields, compose, min_id,
/// max_id); `functions.rs` says which there are and what each checks.
pub trait FunctionsSql {
    fn words(&self) -> &'static Words;
    /// A field's name as a parameter.
    fn param(&self, name: &str) -> String;
    /// A result of bit operators as a signed [`Words::int`].
    fn signed(&self, bits: &str) -> String;
    /// The statement that sets `_ms` to the time of `id`.
    fn ms_of_id(&self, layout: &SqlLayout) -> String;
    /// The statement that returns the time `_ms`.
    fn time_of_ms(&self) -> String;
    /// An error raised when `condition` holds.
    fn raise(&self, condition: &str, refusal: Refusal) -> String;
    /// The statements that create (or replace) `function`.
    fn function(&self, function: &Function) -> String;
}

/// The dialect's lines of the generator's comment.
#[derive(Debug)]
pub struct GeneratorNotes {
    /// Where the state is kept, who may touch it and what to grant.
    pub state: Vec<String>,
    /// How a column gets its IDs from the generator.
    pub default: Vec<String>,
    /// Which other generators the install compares with.
    pub seen: &'static [&'static str],
}

/// How a dialect spells `<prefix>_next_id()` and its install;
/// `generator.rs` says in what order they come.
pub trait GeneratorSql {
    fn notes(&self, generator: &SqlGenerator) -> GeneratorNotes;
    /// What begins the install, after the comment.
    fn install_start(&self) -> &'static str;
    /// The checks, before anything is created; a refusal stops the script.
    fn install_check(&self, layout: &SqlLayout, generator: &SqlGenerator) -> String;
    /// The view that lists the generators an installer can see.
    fn registry_view(&self) -> String;
    /// The state, created if it is not there, and its comment.
    fn state(&self, generator: &SqlGenerator) -> String;
    /// The function itself.
    fn next_id(&self, layout: &SqlLayout, generator: &SqlGenerator) -> String;
    /// What ends the install.
    fn install_end(&self, generator: &SqlGenerator) -> String;
}

/// A table to partition.
#[derive(Debug)]
pub struct Table<'a> {
    /// As given: `table` or `schema.table`.
    pub written: &'a str,
    /// The schema with its dot, or nothing.
    pub schema: &'a str,
    pub name: &'a str,
}

/// One partition: the IDs from `from` up to `to`, not included.
#[derive(Debug)]
pub struct Partition {
    /// What ends its name: its period's first day.
    pub suffix: String,
    pub from: i64,
    pub to: i64,
    /// When its period begins, for a comment.
    pub label: String,
}

/// How a dialect spells partitions by ID range; `partitions.rs` works out
/// the partitions.
pub trait PartitionsSql {
    /// How the table must be made, what happens to IDs outside the
    /// partitions and how to add more, then the statements.
    fn partitions(&self, table: &Table, partitions: &[Partition]) -> String;
}

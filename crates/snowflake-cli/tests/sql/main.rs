//! `snowflake sql` end to end, and against real PostgreSQL and MariaDB
//! servers.
//!
//! The servers are private instances on loopback that `scripts/sql-test`
//! installs and starts; it passes their addresses in SNOWFLAKE_TEST_POSTGRES
//! (a psql connection string) and SNOWFLAKE_TEST_MARIADB_SOCKET, and a
//! command that restarts either in SNOWFLAKE_TEST_RESTART. A plain `cargo
//! test` lists the database tests as ignored; asked to run without those
//! variables, they fail and say why.

#[path = "../support/mod.rs"]
mod support;

/// The `snowflake` command and the database clients; restarts.
mod db;
/// The read functions: the shared vectors, errors, purity.
mod functions;
/// `<prefix>_next_id()`: uniqueness under load, the clock, restarts,
/// several generators.
mod generator;
/// What `snowflake sql` prints, to the byte, and its refusals' words.
mod golden;
/// The generator attacked: roles with a grant too many or none, one node
/// in two schemas, the same bits under another name, a look-alike state,
/// statement-based binary logging.
mod hostile;
/// Many clients at once, each taking IDs, and what their IDs must show.
mod load;
/// Partitions by ID range: rows land in the partition of their period.
mod partitions;
/// An install of the previous script, upgraded.
mod upgrade;

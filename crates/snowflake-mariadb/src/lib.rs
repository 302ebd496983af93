//! `snowflake_next_id()` and the read functions of the snowflake core as a
//! MariaDB loadable function library (`CREATE FUNCTION ... SONAME`), and a
//! daemon plugin in the same file that holds their settings as server
//! options (`snowflake_layout`, `snowflake_epoch`, `snowflake_tick_ms`,
//! `snowflake_fields`, `snowflake_state_file`).
//!
//! The server is one multithreaded process, so the core's lock-free
//! generator runs in it as it is: one generator per server, shared by every
//! connection, its high-water mark in a file of the data directory through
//! `snowflake-store`'s `FileMarkStore` (the file and lock of `snowflake
//! generate --state-file`). See `docs/mariadb-function.md`.
//!
//! # Why the plain C interface, not the `udf` crate
//!
//! The `udf` crate (0.5) wraps the same interface, but lets a panic unwind
//! out of its `extern "C"` functions (which aborts the server, every
//! connection with it), can report a row's failure only as NULL (a NULL
//! that a non-strict multi-row INSERT turns into 0 with a warning), and
//! declares no plugin, hence no server options. What it would save is a
//! few `#[repr(C)]` structures: they are in `abi.rs`, with the server
//! functions this library calls (`my_message`, to fail the statement with
//! the message; the session's binary logging, the statement's stage, the
//! replica applier, the privilege check; the error log), looked up by name
//! at run time so that a server without them is refused in words.
//!
//! Nothing here computes an ID or reads one: the core does, with the
//! parsers of `snowflake-io`.
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod abi;
mod clock;
mod functions;
mod issuer;
mod plugin;
mod read;
mod settings;

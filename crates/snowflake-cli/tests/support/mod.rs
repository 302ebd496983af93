//! Helpers the CLI crate's test binaries share (`cli`, `sql`, `cluster`),
//! one concern a file, re-exported flat.

// Each binary uses some of them: what one leaves unused is not dead.
#![allow(dead_code, unused_imports)]

/// The binary with every `SNOWFLAKE_*` setting removed; what a run printed.
pub mod command;
/// Dumps of IDs with faults planted at known counts, for `audit`.
pub mod dump;
/// A `generate` that runs while the test acts, its IDs read as they come.
pub mod generating;
/// Plain HTTP/1.1 over a real socket; free ports for etcd.
pub mod http;
/// Reading the JSON a run printed.
pub mod json;
/// Polling with a deadline.
pub mod poll;
/// Scratch directories removed however the test ends.
pub mod scratch;
/// `snowflake serve` on port 0, its address read from its log.
pub mod served;

pub use command::{Printed, command, snowflake, spawn_piped, stderr_of, stdout_of};
pub use generating::Generating;
pub use http::{Answer, exchange, free_port, http};
pub use json::texts_at;
pub use poll::wait_for;
pub use scratch::{Scratch, path_arg};
pub use served::Served;

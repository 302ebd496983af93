//! The `snowflake` command end to end, through the built binary: output,
//! exit codes, pipes, files, a real socket. One room a concern; the helpers
//! they share are in `tests/support/`.
//!
//! The `sql` binary (real databases, run by `scripts/sql-test`) and the
//! `cluster` binary (etcd, the `cluster` feature) are separate: they need
//! what a plain `cargo test` does not have.

#[path = "../support/mod.rs"]
mod support;

/// `compose`: the worked example, its JSON, the clock's now, any layout.
mod compose;

/// `decode` of IDs given as arguments, and one ID under every preset.
mod decode;

/// `decode` of IDs streamed on stdin: text, NDJSON, CSV, error records.
mod streams;

/// `bounds` and `layouts`: ranges, the presets' table, the time left, js53.
mod bounds_and_layouts;

/// Bad input of every kind: status 2 and one clear line.
mod bad_input;

/// `generate` without a state file: unique, increasing, JSON, closed pipes.
mod generate;

/// State files: marks across runs, the lock, planted links, a removed lock.
mod state_files;

/// `serve` as a real process: answers, SIGTERM, request logs, bad settings.
mod serve;

/// `page`: the web page as one self-contained file.
mod page;

/// Text forms through compose, decode and generate.
mod text_forms;

/// `mask`, `unmask` and `mask-key new`: vectors, streams, the key never shown.
mod mask;

/// `plan`: proposals and checks against hand-worked layouts.
mod plan;

/// `audit`: dumps with planted faults, in text and JSON, any form and layout.
mod audit;

/// `healthcheck`: a served binary asked over a real socket.
mod healthcheck;

/// `completions` and `man`, read by bash, zsh, fish, groff and man.
mod completions;

/// The docs against the code: generated references fresh, links whole, the
/// guide's command lines running.
mod docs;

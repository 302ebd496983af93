//! The extension on real PostgreSQL servers, each test with servers of its
//! own. Run by `scripts/pg-extension test`, which installs the extension
//! first.

mod support;

// 16 connections inserting at once with the ID as the primary key's default.
mod load;
// kill -9 of the postmaster mid-load, committed and uncommitted IDs; pg_dump.
mod crash;
// A streaming standby promoted after its primary is killed under load.
mod replica;
// The clock set back while issuing and across a crash (libfaketime).
mod clock;
// What a role may and may not do to the generator; no stranger freezes it.
mod privileges;
// The settings: a forgotten or partial node, a layout past bigint, no preload.
mod settings;
// Refused misuse: a parallel plan, an unlogged mark, a database not in UTF8.
mod misuse;
// The read functions against the shared vectors and the core's JSON.
mod functions;

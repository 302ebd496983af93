//! The operators' tools end to end, through the binary: `plan`, `audit`,
//! the time left in `layouts`, and `healthcheck` against a real service.

#[path = "../support/mod.rs"]
mod support;

/// `plan`: proposals and checks against hand-worked layouts, and the
/// planned layout fed back to the other commands.
mod plan;

/// `audit`: dumps with planted faults, in text and JSON, any form and layout.
mod audit;

/// `layouts`: the time each preset has left, judged at a given now.
mod layouts;

/// `healthcheck`: a served binary asked over a real socket.
mod healthcheck;

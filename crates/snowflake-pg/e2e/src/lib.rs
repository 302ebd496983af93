//! The tests are in tests/, run by scripts/pg-extension test. Here: the
//! unit tests of the extension's parts that call no PostgreSQL, compiled
//! from its sources, since the extension itself links only into a server.

#[cfg(test)]
#[path = "../../src/backoff.rs"]
mod backoff;

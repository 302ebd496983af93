//! The core's public API end to end, one room per concern. Shared helpers
//! live in `support/`. One binary (`--test lib`), so it links once.

mod support;

/// Published IDs, compose and decode limits, bounds, properties over layouts.
mod layouts;

/// One generator on a manual clock: clock histories, waits, lead, tolerance, stats.
mod generator;

/// Many threads on one generator: no duplicates, no overlap, counts that add up.
mod threads;

/// The high-water mark with a store in memory: reserved ahead, waited out.
mod marks;

/// The shared vectors of testdata/vectors.json: compose, errors, presets, verdicts.
mod vectors;

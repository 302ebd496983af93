//! `Layout::decode` for every preset and any 64-bit ID: it never panics,
//! refuses only a set sign bit or bits above a narrow layout's width, and its segments, fields and JSON agree with
//! the ID's bits.
//!
//! Read an artifact with `cargo fuzz fmt decode <artifact>`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowflake_fuzz::targets::decode::run(data));

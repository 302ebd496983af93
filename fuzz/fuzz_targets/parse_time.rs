//! `UnixMillis::parse_rfc3339`, the one RFC 3339 reader behind the command,
//! the API, Python and the WebAssembly module: it never panics, every time
//! it accepts reads back from the date the core writes for it, and `jiff`,
//! which the command used alone before, reads the same text to the same
//! millisecond wherever its years reach.
//!
//! The input bytes are the string, so a crash artifact reads as the date.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowflake_fuzz::targets::parse_time::run(data));

//! `Layout::parse`, the one layout parser behind the CLI's `--layout` and the
//! HTTP API: it never panics, what it accepts fills at most 64 bits and reads
//! back from its own spec or name, and composing then decoding through it
//! gives back the parts.
//!
//! Read an artifact with `cargo fuzz fmt parse_layout <artifact>`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowflake_fuzz::targets::parse_layout::run(data));

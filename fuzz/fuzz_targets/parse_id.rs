//! `Id::parse`, the one ID parser behind `FromStr`, serde, the CLI and the
//! HTTP path: it never panics, what it accepts prints back to itself in
//! decimal and hexadecimal, and it agrees with the standard library's integer
//! parsers on the inputs both understand.
//!
//! The input bytes are the string, so a crash artifact reads as the ID text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowflake_fuzz::targets::parse_id::run(data));

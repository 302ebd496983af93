//! `TextForm::parse` and `TextForm::encode`, the text forms behind
//! `--format` and `format=`: the parser never panics, every error names the
//! input as `id "..."`, and what it accepts is the number the form's digits
//! spell, written back at the form's width. For base32 and base62 the
//! written text sorts as the IDs do.
//!
//! The first byte picks the form, the rest is the text, so a crash artifact
//! reads as the ID text after one byte.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| snowflake_fuzz::targets::parse_text::run(data));

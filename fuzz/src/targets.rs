//! Each fuzz target's property as a function of the raw input, so that
//! `cargo fuzz` and `tests/properties.rs` run the same checks.

pub mod decode;
pub mod parse_id;
pub mod parse_layout;
pub mod parse_text;

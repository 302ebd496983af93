//! Each fuzz target's property as a function of the raw input, so that
//! `cargo fuzz` and `tests/properties.rs` run the same checks.

pub mod decode;
pub mod parse_id;
pub mod parse_layout;
pub mod parse_text;
pub mod parse_time;

/// How an error message names the ID text it refused: quoted whole, or its
/// first 64 characters quoted with an ellipsis (the core cuts longer values
/// so that a pasted megabyte is not echoed back).
pub fn named_id(text: &str) -> String {
    if text.chars().count() <= 64 {
        format!("id {text:?} ")
    } else {
        let start: String = text.chars().take(64).collect();
        format!("id \"{}…\" ", start.escape_debug())
    }
}

//! The functions the module exports. Each takes integers, reads text from
//! the input buffer where it needs some, calls the core or the masking
//! crate, and leaves its answer in the output buffer or the table of numbers
//! (see the crate's `# Design`). IDs cross as `i64` and are the same 64 bits
//! as the core's `u64`.
//!
//! `#[unsafe(no_mangle)]` is the only unsafe attribute here: it keeps each
//! function's name for the glue, and each name is unique to this crate.
#![allow(unsafe_code)]

mod generator;
mod ids;
mod layouts;
mod masking;
mod tables;
mod text;

pub use generator::*;
pub use ids::*;
pub use layouts::*;
pub use masking::*;
pub use tables::*;
pub use text::*;

use snowflake::Layout;

use crate::registry::LAYOUTS;
use crate::reply;

/// The separator between the parts of a text input (a spec, its epoch and
/// tick; a field's name and its value), which no part can hold usefully.
const SEP: char = '\0';

/// Makes the input buffer `len` bytes long and returns its address, where
/// the glue writes the text of the next call.
#[unsafe(no_mangle)]
pub extern "C" fn sf_input(len: usize) -> usize {
    reply::input_buffer(len)
}

/// Where the output of the last call starts.
#[unsafe(no_mangle)]
pub extern "C" fn sf_out_ptr() -> usize {
    reply::output_ptr()
}

/// How many bytes of output the last call left.
#[unsafe(no_mangle)]
pub extern "C" fn sf_out_len() -> usize {
    reply::output_len()
}

/// Where the table of numbers starts: `reply::NUMS` slots of 64 bits.
#[unsafe(no_mangle)]
pub extern "C" fn sf_nums_ptr() -> usize {
    reply::numbers_ptr()
}

/// Where the table of doubles starts, beside the numbers: the same values
/// where a call says so, for JavaScript to read without a `BigInt`.
#[unsafe(no_mangle)]
pub extern "C" fn sf_doubles_ptr() -> usize {
    reply::doubles_ptr()
}

/// Runs `f` on the layout `handle` names.
fn with_layout(handle: i32, f: impl FnOnce(&Layout) -> i32) -> i32 {
    LAYOUTS.with(|layouts| match layouts.borrow().get(handle) {
        Some(layout) => f(layout),
        None => reply::stale("layout"),
    })
}

/// `name\0value…` read as `snowflake_io::parse_fields` reads the command's
/// fields: each value by the layout's one field-value parser.
fn field_values<'a>(
    layout: &Layout,
    input: &'a str,
) -> Result<Vec<(&'a str, u64)>, snowflake::Error> {
    if input.is_empty() {
        return Ok(Vec::new());
    }
    let mut parts = input.split(SEP);
    let mut values = Vec::new();
    while let Some(name) = parts.next() {
        let text = parts.next().unwrap_or_default();
        values.push((name, layout.parse_value(name, text)?));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::layouts::{EPOCH_GIVEN, TICK_GIVEN};
    use super::*;
    use crate::reply::{DONE, FAILED};
    use snowflake::TextForm;

    fn output() -> String {
        crate::reply::output_text()
    }

    fn write_input(text: &str) {
        crate::reply::fill_input(text);
    }

    fn number(at: usize) -> u64 {
        crate::reply::number(at)
    }

    #[test]
    fn a_layout_with_epoch_and_tick_as_the_command_reads_them() {
        write_input("time:29,worker:21,sequence:13\u{0}1474300800000\u{0}1000");
        let handle = sf_layout_new(EPOCH_GIVEN | TICK_GIVEN);
        assert!(handle >= 0, "{}", output());
        let json: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(json["tick_ms"], 1000);
        assert_eq!(json["epoch_ms"], 1474300800000_i64);

        write_input("twitter\0x");
        assert_eq!(sf_layout_new(TICK_GIVEN), FAILED);
        let err: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(err["kind"], "InvalidInput");
        assert_eq!(err["field"], "tick_ms");
        assert_eq!(
            err["message"],
            "tick_ms x is not allowed; a tick is a whole number of milliseconds, at least 1"
        );
        sf_layout_free(handle);
    }

    #[test]
    fn compose_checks_each_field_and_decode_gives_them_back() {
        write_input("twitter");
        let twitter = sf_layout_new(0);
        write_input("datacenter\x001\0machine\x001\0sequence\x000");
        assert_eq!(sf_compose(twitter, 1288834975657), DONE);
        assert_eq!(number(0), 4194439168);

        assert_eq!(sf_decode(twitter, 4194439168), DONE);
        assert_eq!(
            (0..5).map(number).collect::<Vec<_>>(),
            [1288834975657, 1000, 1, 1, 0]
        );

        write_input("machine\x0032");
        assert_eq!(sf_compose(twitter, 1288834975657), FAILED);
        let err: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(err["field"], "machine");
        assert_eq!(
            err["message"],
            "machine 32 is out of range: 0 to 31 (5 bits)"
        );
        sf_layout_free(twitter);
        assert_eq!(sf_decode(twitter, 1), FAILED);
    }

    #[test]
    fn compose_by_place_from_either_table_is_the_core_s_compose() {
        write_input("discord");
        let discord = sf_layout_new(0);
        let composed = |status: i32| {
            assert_eq!(status, DONE, "{}", output());
            assert_eq!(number(0), 175928847299117063);
        };
        // worker (place 0) = 1, increment (place 2) = 7.
        crate::reply::fill_numbers(&[0, 1, 2, 7]);
        composed(sf_compose_values(discord, 1462015105796, 2));
        crate::reply::fill_doubles(&[0.0, 1.0, 2.0, 7.0]);
        composed(sf_compose_doubles(discord, 1462015105796.0, 2));
        // Ten fields and more go through the heap: the same checks.
        let many: Vec<u64> = (0..10).flat_map(|_| [0, 1]).collect();
        for (pairs, why) in [
            (&many[..], "worker is given more than once"),
            (&[0, 32], "worker 32 is out of range"),
        ] {
            crate::reply::fill_numbers(pairs);
            let count = pairs.len() / 2;
            assert_eq!(sf_compose_values(discord, 1462015105796, count), FAILED);
            assert!(output().contains(why), "{}", output());
        }
        crate::reply::fill_numbers(&[3, 0]);
        assert_eq!(sf_compose_values(discord, 1462015105796, 1), FAILED);
        assert_eq!(sf_compose_values(discord, 1462015105796, 1000), FAILED);
        sf_layout_free(discord);
    }

    #[test]
    fn text_forms_both_ways_by_their_index_in_the_list() {
        let base62 = TextForm::ALL
            .iter()
            .position(|f| *f == TextForm::Base62)
            .unwrap() as i32;
        sf_to_text(base62, 175928847299117063);
        assert_eq!(output(), "0Czks0tP37X");
        write_input("0Czks0tP37X");
        assert_eq!(sf_from_text(base62), DONE);
        assert_eq!(number(0), 175928847299117063);
        write_input("0x10");
        assert_eq!(sf_from_text(-1), DONE);
        assert_eq!(number(0), 16);
    }

    #[test]
    fn a_key_with_a_bad_character_is_blamed_on_the_key() {
        write_input("twitter");
        let twitter = sf_layout_new(0);
        write_input(&format!("{}zz", "ab".repeat(31)));
        assert_eq!(sf_masker_new(twitter), FAILED);
        let err: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(err["field"], "key");
        assert!(!output().contains("abab"), "the key's text is never shown");
        sf_layout_free(twitter);
    }
}

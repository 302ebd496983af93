//! `Layout::decode` for every preset and any 64-bit ID: it never panics,
//! refuses only a set sign bit or bits above a narrow layout's width, and its segments, fields and JSON agree with
//! the ID's bits.
//!
//! Read an artifact with `cargo fuzz fmt decode <artifact>`.

use arbitrary::{Arbitrary, Unstructured};
use std::sync::LazyLock;

use crate::check_decode;
use snowflake::{Id, Layout};

// Built once: rebuilding the five presets would cost more than the decode.
static PRESETS: LazyLock<[Layout; Layout::PRESETS.len()]> = LazyLock::new(Layout::presets);

/// One run on raw fuzzer bytes, read as libFuzzer's typed targets read
/// them (`arbitrary_take_rest`).
pub fn run(data: &[u8]) {
    if let Ok(input) = <(u8, u64)>::arbitrary_take_rest(Unstructured::new(data)) {
        check(input);
    }
}

/// The property, on one input.
pub fn check(input: (u8, u64)) {
    let (index, id) = input;
    let layout = &PRESETS[usize::from(index) % PRESETS.len()];
    check_decode(layout, Id::new(id));
}

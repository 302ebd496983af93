//! `Layout::decode` for every preset and any 64-bit ID: it never panics,
//! refuses only a set sign bit or bits above a narrow layout's width, and its segments, fields and JSON agree with
//! the ID's bits.
//!
//! Read an artifact with `cargo fuzz fmt decode <artifact>`.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use snowflake::{Id, Layout};
use snowflake_fuzz::check_decode;

// Built once: rebuilding the five presets would cost more than the decode.
static PRESETS: LazyLock<[Layout; Layout::PRESETS.len()]> = LazyLock::new(Layout::presets);

fuzz_target!(|input: (u8, u64)| {
    let (index, id) = input;
    let layout = &PRESETS[usize::from(index) % PRESETS.len()];
    check_decode(layout, Id::new(id));
});

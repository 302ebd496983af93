//! Masking: FF1 over a layout's IDs under a key, by the masking crate.

use snowflake::Id;
use snowflake_mask::{MaskKey, Masker};

use super::with_layout;
use crate::registry::MASKERS;
use crate::reply::{self, DONE};

/// A masker for the layout under the key whose text is the input (64
/// hexadecimal characters, as a key file holds it). Returns its handle.
#[unsafe(no_mangle)]
pub extern "C" fn sf_masker_new(layout: i32) -> i32 {
    let key = reply::with_input(MaskKey::from_hex);
    let key = match key {
        Ok(key) => key,
        Err(err) => return reply::mask_error(&err, "key"),
    };
    with_layout(layout, |layout| match Masker::new(layout, &key) {
        Ok(masker) => MASKERS
            .with(|maskers| maskers.borrow_mut().insert(masker))
            .unwrap_or_else(|| reply::stale("masker")),
        Err(err) => reply::mask_error(&err, "layout"),
    })
}

/// Whether the layout can be masked at all (FF1 needs 20 bits), checked by
/// the masking crate itself, so that a page can say so beside the layout
/// while it says what is wrong with the key beside the key.
#[unsafe(no_mangle)]
pub extern "C" fn sf_masker_check(layout: i32) -> i32 {
    with_layout(layout, |layout| {
        match Masker::new(layout, &MaskKey::from_bytes([0; MaskKey::BYTES])) {
            Ok(_) => DONE,
            Err(err) => reply::mask_error(&err, "layout"),
        }
    })
}

/// Frees a masker, and with it the key's schedule, which the masking crate
/// wipes.
#[unsafe(no_mangle)]
pub extern "C" fn sf_masker_free(masker: i32) {
    MASKERS.with(|maskers| maskers.borrow_mut().remove(masker));
}

fn with_masker(
    handle: i32,
    id: i64,
    f: impl FnOnce(&Masker, Id) -> Result<Id, snowflake::Error>,
) -> i32 {
    MASKERS.with(|maskers| match maskers.borrow().get(handle) {
        Some(masker) => reply::number_or_error(f(masker, Id::new(id as u64)).map(Id::get)),
        None => reply::stale("masker"),
    })
}

/// The masked form of `id`: the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_mask(masker: i32, id: i64) -> i32 {
    with_masker(masker, id, |masker, id| masker.mask(id))
}

/// The ID `masked` hides: the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_unmask(masker: i32, masked: i64) -> i32 {
    with_masker(masker, masked, |masker, id| masker.unmask(id))
}

use proptest::prelude::*;
use snowflake::{Id, Layout};
use snowflake_mask::{MaskKey, Masker};

use crate::support::{layout_of_width, masker};

fn any_key() -> impl Strategy<Value = MaskKey> {
    any::<[u8; 32]>().prop_map(MaskKey::from_bytes)
}

proptest! {
    /// Every preset: a random ID masks into the layout and back, under any key.
    #[test]
    fn presets_round_trip(key in any_key(), preset in 0..Layout::PRESETS.len(), raw in any::<u64>()) {
        let layout = Layout::presets()[preset].clone();
        let id = Id::new(raw & layout.max_id().get());
        let masker = Masker::new(&layout, &key).unwrap();
        let masked = masker.mask(id).unwrap();
        prop_assert!(masked <= layout.max_id(), "{} masked to {} in {}", id, masked, layout.name());
        prop_assert!(layout.decode(masked).is_ok());
        prop_assert_eq!(masker.unmask(masked).unwrap(), id);
        // Unmasking is a permutation too: any ID of the layout unmasks into it.
        let unmasked = masker.unmask(id).unwrap();
        prop_assert!(unmasked <= layout.max_id());
        prop_assert_eq!(masker.mask(unmasked).unwrap(), id);
    }

    /// Every custom width from 20 to 64 bits, at random IDs and at its ends.
    #[test]
    fn custom_widths_round_trip(key in any_key(), bits in 20u8..=64, raw in any::<u64>()) {
        let layout = layout_of_width(bits);
        let masker = Masker::new(&layout, &key).unwrap();
        let max = layout.max_id();
        for id in [Id::new(raw & max.get()), Id::new(0), max] {
            let masked = masker.mask(id).unwrap();
            prop_assert!(masked <= max, "{} bits: {} masked to {}", bits, id, masked);
            prop_assert_eq!(masker.unmask(masked).unwrap(), id);
        }
    }

    /// An ID outside the layout is the error decode gives, never a panic
    /// and never a value.
    #[test]
    fn ids_beyond_the_width_are_refused_like_decode_refuses_them(bits in 20u8..=63, raw in any::<u64>()) {
        let layout = layout_of_width(bits);
        let masker = masker(&layout);
        let id = Id::new(raw | (1 << bits));
        let expected = layout.decode(id).unwrap_err();
        prop_assert_eq!(masker.mask(id).unwrap_err(), expected.clone());
        prop_assert_eq!(masker.unmask(id).unwrap_err(), expected);
    }
}

/// The narrowest layout, all 2^20 IDs: masking hits each exactly once.
#[test]
fn the_twenty_bit_layout_is_a_bijection() {
    let layout = layout_of_width(20);
    let masker = masker(&layout);
    let size = 1usize << 20;
    let mut seen = vec![false; size];
    for raw in 0..size as u64 {
        let masked = masker.mask(Id::new(raw)).unwrap().get() as usize;
        assert!(masked < size, "{raw} masked to {masked}");
        assert!(!seen[masked], "{masked} reached twice");
        seen[masked] = true;
    }
}

/// The twitter sign bit stays clear, so a masked ID is a non-negative i64;
/// a js53 one stays a safe JavaScript integer.
#[test]
fn masked_ids_fit_where_the_ids_did() {
    let twitter = masker(&Layout::twitter());
    let js53 = masker(&Layout::js53());
    for raw in (0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
        let t = twitter.mask(Id::new(raw >> 1)).unwrap().get();
        assert!(i64::try_from(t).is_ok(), "{t}");
        let j = js53.mask(Id::new(raw >> 11)).unwrap().get();
        assert!(j <= Layout::JS_MAX_SAFE, "{j}");
    }
}

/// The permutation depends on the key and the width only: an epoch or tick
/// override, or another split of the same width, masks alike.
#[test]
fn only_the_width_matters() {
    let twitter = Layout::twitter();
    let moved = twitter
        .clone()
        .with_epoch_ms(0)
        .unwrap()
        .with_tick_ms(10)
        .unwrap();
    let sonyflake = Layout::sonyflake();
    let id = Id::new(1541815603606036480);
    let masked = masker(&twitter).mask(id).unwrap();
    assert_eq!(masker(&moved).mask(id).unwrap(), masked);
    assert_eq!(masker(&sonyflake).mask(id).unwrap(), masked);
    let wider = masker(&Layout::discord()).mask(id).unwrap();
    assert_ne!(wider, masked);
}

use std::collections::HashSet;

use snowflake::{Id, Layout};
use snowflake_mask::{Keyring, Masker};

use crate::support::{key, other_key};

/// Masked before the rotation, found after it under the old key; masked
/// after, found under the new; under the wrong key, a different ID.
#[test]
fn the_newest_key_masks_and_every_key_unmasks() {
    let twitter = Layout::twitter();
    let (old, new) = (key(), other_key());
    let table: Vec<Id> = (0..1000u64)
        .map(|i| Id::new(1541815603606036480 + (i << 22)))
        .collect();
    let known: HashSet<Id> = table.iter().copied().collect();
    let before = Keyring::new(&twitter, [old.clone()]).unwrap();
    let after = Keyring::new(&twitter, [new.clone(), old.clone()]).unwrap();
    for &id in &table {
        let old_masked = before.mask(id).unwrap();
        assert_eq!(
            old_masked,
            Masker::new(&twitter, &old).unwrap().mask(id).unwrap()
        );
        assert_eq!(
            after.find(old_masked, |c| known.contains(&c)).unwrap(),
            Some((1, id))
        );
        let new_masked = after.mask(id).unwrap();
        assert_ne!(new_masked, old_masked);
        assert_eq!(
            after.find(new_masked, |c| known.contains(&c)).unwrap(),
            Some((0, id))
        );
        let candidates = after.candidates(old_masked).unwrap();
        assert_eq!(candidates.len(), 2);
        assert_eq!(candidates[1], id);
        assert!(
            !known.contains(&candidates[0]),
            "the wrong key's answer is in the table"
        );
    }
    // A value nobody masked finds nothing in the table.
    let stranger = Id::new(12345);
    assert_eq!(after.find(stranger, |c| known.contains(&c)).unwrap(), None);
}

/// A key ring refuses what a masker refuses, and an empty ring.
#[test]
fn a_ring_needs_keys_and_a_wide_enough_layout() {
    let narrow: Layout = "time:10,sequence:5".parse().unwrap();
    let err = Keyring::new(&narrow, [key()]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("layout time:10,sequence:5 is 15 bits wide")
    );
    let err = Keyring::new(&Layout::twitter(), Vec::new()).unwrap_err();
    assert_eq!(err.to_string(), "a key ring needs at least one key");
}

use std::collections::BTreeSet;

use serde_json::Value;
use snowflake::{Id, Layout};
use snowflake_mask::{MaskKey, Masker};

fn cases() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/mask-vectors.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn id(value: &Value) -> Id {
    value.as_str().unwrap().parse().unwrap()
}

/// Every case masks and unmasks as FF1 written out in Python says.
#[test]
fn every_shared_vector_masks_and_unmasks_as_written() {
    let cases = cases();
    assert!(cases.len() > 100, "{} cases", cases.len());
    for case in &cases {
        let layout: Layout = case["layout"].as_str().unwrap().parse().unwrap();
        assert_eq!(u64::from(layout.bits()), case["bits"].as_u64().unwrap());
        let key = MaskKey::from_hex(case["key"].as_str().unwrap()).unwrap();
        let masker = Masker::new(&layout, &key).unwrap();
        let (plain, masked) = (id(&case["id"]), id(&case["masked"]));
        assert_eq!(masker.mask(plain).unwrap(), masked, "{case}");
        assert_eq!(masker.unmask(masked).unwrap(), plain, "{case}");
    }
}

/// The file covers every preset, the narrowest width and both halves'
/// parities, so a new preset cannot go untested by the page.
#[test]
fn the_vectors_cover_every_preset_and_the_edges() {
    let cases = cases();
    let layouts: BTreeSet<&str> = cases
        .iter()
        .map(|c| c["layout"].as_str().unwrap())
        .collect();
    for preset in Layout::PRESETS {
        assert!(layouts.contains(preset), "no vectors for {preset}");
    }
    let widths: BTreeSet<u64> = cases.iter().map(|c| c["bits"].as_u64().unwrap()).collect();
    for width in [u64::from(Masker::MIN_BITS), 21, 53, 63, 64] {
        assert!(widths.contains(&width), "no vectors {width} bits wide");
    }
    let keys: BTreeSet<&str> = cases.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert!(keys.len() >= 2);
}

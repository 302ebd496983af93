use snowflake::{Id, Layout};
use snowflake_mask::Masker;

use crate::support::{key, other_key, rank_correlation};

const N: u64 = 100_000;

/// A burst of consecutive IDs, as one node issues them: rank correlation
/// of the masked values with issue order. Random order gives a standard
/// deviation of 1/√(N−1), about 0.0032; 0.02 is six of them.
#[test]
fn consecutive_ids_mask_to_values_in_no_order() {
    for layout in Layout::presets() {
        let masker = Masker::new(&layout, &key()).unwrap();
        let start = layout.max_id().get() / 3;
        let masked: Vec<u64> = (start..start + N)
            .map(|raw| masker.mask(Id::new(raw)).unwrap().get())
            .collect();
        let rho = rank_correlation(&masked);
        assert!(
            rho.abs() < 0.02,
            "{}: rank correlation {rho}",
            layout.name()
        );
        // And the plain IDs, for contrast, are perfectly ordered.
        let plain: Vec<u64> = (start..start + N).collect();
        assert_eq!(rank_correlation(&plain), 1.0);
    }
}

/// IDs a millisecond apart on twitter (one every 2^22): still no order.
#[test]
fn ids_of_successive_milliseconds_mask_to_values_in_no_order() {
    let masker = Masker::new(&Layout::twitter(), &key()).unwrap();
    let start = 1541815603606036480u64;
    let masked: Vec<u64> = (0..N)
        .map(|i| masker.mask(Id::new(start + (i << 22))).unwrap().get())
        .collect();
    let rho = rank_correlation(&masked);
    assert!(rho.abs() < 0.02, "rank correlation {rho}");
}

/// Two keys: the same IDs mask to unrelated values, no equal ones, about
/// half their bits different, and no rank correlation between the two.
#[test]
fn two_keys_give_unrelated_outputs() {
    let layout = Layout::twitter();
    let a = Masker::new(&layout, &key()).unwrap();
    let b = Masker::new(&layout, &other_key()).unwrap();
    let start = 1541815603606036480u64;
    let pairs: Vec<(u64, u64)> = (start..start + N)
        .map(|raw| {
            (
                a.mask(Id::new(raw)).unwrap().get(),
                b.mask(Id::new(raw)).unwrap().get(),
            )
        })
        .collect();
    assert!(pairs.iter().all(|(x, y)| x != y));
    let differing: u64 = pairs
        .iter()
        .map(|(x, y)| u64::from((x ^ y).count_ones()))
        .sum();
    let mean = differing as f64 / N as f64;
    // 63 fair bits: mean 31.5, standard error about 0.013.
    assert!((mean - 31.5).abs() < 0.1, "{mean} bits differ on average");
    // Ranks under key b, read in the order of key a's values.
    let mut by_a = pairs.clone();
    by_a.sort_by_key(|(x, _)| *x);
    let b_in_a_order: Vec<u64> = by_a.iter().map(|(_, y)| *y).collect();
    let rho = rank_correlation(&b_in_a_order);
    assert!(rho.abs() < 0.02, "rank correlation between keys {rho}");
}

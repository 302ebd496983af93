//! Helpers the tests share: keys, layouts of any width, and a rank correlation.

use snowflake::Layout;
use snowflake_mask::{MaskKey, Masker};

/// A fixed key, written out, so a test can look for it in any output.
pub const KEY_HEX: &str = "6c0f9d6b0c2b8f6a3f8e4d2a1b0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d";

pub fn key() -> MaskKey {
    MaskKey::from_hex(KEY_HEX).unwrap()
}

pub fn other_key() -> MaskKey {
    MaskKey::from_bytes([0x5a; 32])
}

pub fn masker(layout: &Layout) -> Masker {
    Masker::new(layout, &key()).unwrap()
}

/// A custom layout exactly `bits` wide (20 to 64).
pub fn layout_of_width(bits: u8) -> Layout {
    Layout::builder()
        .time_bits(bits - 12)
        .field("node", 4)
        .sequence("sequence", 8)
        .build()
        .unwrap()
}

/// Spearman's rank correlation of `values` against their positions: 1 for
/// a sequence in increasing order, −1 for decreasing, near 0 for no order.
/// Values must be distinct (a permutation's are).
pub fn rank_correlation(values: &[u64]) -> f64 {
    let n = values.len();
    let mut by_value: Vec<usize> = (0..n).collect();
    by_value.sort_by_key(|&i| values[i]);
    let mut d2: u128 = 0;
    for (rank, &position) in by_value.iter().enumerate() {
        let d = rank.abs_diff(position) as u128;
        d2 += d * d;
    }
    let n = n as f64;
    1.0 - 6.0 * d2 as f64 / (n * (n * n - 1.0))
}

#[test]
fn rank_correlation_reads_order() {
    assert_eq!(rank_correlation(&[1, 2, 3, 4, 5]), 1.0);
    assert_eq!(rank_correlation(&[50, 40, 30, 20, 10]), -1.0);
    // Textbook case: ranks 2,1,4,3,5 against 1..5 give 1 − 6·4/120 = 0.8.
    assert!((rank_correlation(&[20, 10, 40, 30, 50]) - 0.8).abs() < 1e-12);
}

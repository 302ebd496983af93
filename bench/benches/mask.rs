//! Masking one ID and unmasking it, one thread: our masker on the widths
//! people use, beside FF1 from the same `fpe` crate through its own
//! big-integer numeral string (what the masker would cost without its
//! fixed-width one), and beside one bare AES-256 block, the unit FF1 is
//! made of (a masking is eleven of them: the PRF's first block, then one a
//! round).
//!
//! ```text
//! cargo bench --bench mask && ./medians.sh
//! ```

use std::hint::black_box;

use aes::Aes256;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use criterion::{Criterion, criterion_group, criterion_main};
use fpe::ff1::{FF1, FlexibleNumeralString};
use snowflake::{Id, Layout};
use snowflake_mask::{MaskKey, Masker};

const KEY: [u8; 32] = [0x5a; 32];

/// Successive IDs of a busy twitter node, so no two calls see one input.
fn ids(layout: &Layout) -> impl FnMut() -> Id + use<> {
    let max = layout.max_id().get();
    let mut next = 1541815603606036480u64 & max;
    move || {
        next = (next + 1) & max;
        Id::new(next)
    }
}

fn mask(c: &mut Criterion) {
    let mut group = c.benchmark_group("mask");
    for layout in [Layout::twitter(), Layout::js53()] {
        let masker = Masker::new(&layout, &MaskKey::from_bytes(KEY)).unwrap();
        let name = layout.name().into_owned();
        let mut next = ids(&layout);
        group.bench_function(format!("ours-{name}/mask"), |b| {
            b.iter(|| masker.mask(black_box(next())).unwrap())
        });
        let mut next = ids(&layout);
        group.bench_function(format!("ours-{name}/unmask"), |b| {
            b.iter(|| masker.unmask(black_box(next())).unwrap())
        });
    }
    let ff1 = FF1::<Aes256>::new(&KEY, 2).unwrap();
    let mut next = ids(&Layout::twitter());
    group.bench_function("fpe-bigint-twitter/mask", |b| {
        b.iter(|| {
            let raw = next().get();
            let digits: Vec<u16> = (0..63).rev().map(|k| ((raw >> k) & 1) as u16).collect();
            ff1.encrypt(&[], &FlexibleNumeralString::from(black_box(digits)))
                .unwrap()
        })
    });
    let aes = Aes256::new(&KEY.into());
    let mut block = [0u8; 16].into();
    group.bench_function("aes256-one-block", |b| {
        b.iter(|| aes.encrypt_block(black_box(&mut block)))
    });
    group.finish();
}

criterion_group!(benches, mask);
criterion_main!(benches);

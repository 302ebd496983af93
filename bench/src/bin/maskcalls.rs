//! Masking in a loop, for counting instructions per ID under callgrind
//! (`bench/mask.sh`), beside FF1 through `fpe`'s big-integer numeral string
//! and one bare AES-256 block:
//!
//! ```text
//! maskcalls ours-twitter-mask|ours-twitter-unmask|ours-js53-mask|fpe-bigint-twitter|aes256-block COUNT
//! ```
//!
//! Each loop is a function of its own (`run_*`) so that callgrind counts only
//! it (`--toggle-collect`), not the set-up.

use std::hint::black_box;
use std::process::ExitCode;

use aes::Aes256;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use fpe::ff1::{FF1, FlexibleNumeralString};
use snowflake::{Id, Layout};
use snowflake_mask::{MaskKey, Masker};

const KEY: [u8; 32] = [0x5a; 32];
const FIRST: u64 = 1541815603606036480;

fn masker(layout: &Layout) -> Masker {
    Masker::new(layout, &MaskKey::from_bytes(KEY)).unwrap()
}

#[inline(never)]
fn run_mask(masker: &Masker, n: u64) {
    let max = masker.layout().max_id().get();
    for i in 0..n {
        black_box(masker.mask(Id::new((FIRST + i) & max)).ok());
    }
}

#[inline(never)]
fn run_unmask(masker: &Masker, n: u64) {
    for i in 0..n {
        black_box(masker.unmask(Id::new(FIRST + i)).ok());
    }
}

#[inline(never)]
fn run_fpe_bigint(ff1: &FF1<Aes256>, n: u64) {
    for i in 0..n {
        let raw = FIRST + i;
        let digits: Vec<u16> = (0..63).rev().map(|k| ((raw >> k) & 1) as u16).collect();
        black_box(ff1.encrypt(&[], &FlexibleNumeralString::from(digits)).ok());
    }
}

#[inline(never)]
fn run_aes_block(aes: &Aes256, n: u64) {
    let mut block = [0u8; 16].into();
    for _ in 0..n {
        aes.encrypt_block(black_box(&mut block));
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(which), Some(Ok(n))) = (args.first(), args.get(1).map(|n| n.parse::<u64>())) else {
        eprintln!(
            "usage: maskcalls ours-twitter-mask|ours-twitter-unmask|ours-js53-mask|fpe-bigint-twitter|aes256-block COUNT"
        );
        return ExitCode::from(2);
    };
    match which.as_str() {
        "ours-twitter-mask" => run_mask(&masker(&Layout::twitter()), n),
        "ours-twitter-unmask" => run_unmask(&masker(&Layout::twitter()), n),
        "ours-js53-mask" => run_mask(&masker(&Layout::js53()), n),
        "fpe-bigint-twitter" => run_fpe_bigint(&FF1::<Aes256>::new(&KEY, 2).unwrap(), n),
        "aes256-block" => run_aes_block(&Aes256::new(&KEY.into()), n),
        other => {
            eprintln!("unknown subject {other}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

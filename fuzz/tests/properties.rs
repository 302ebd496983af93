//! The fuzz targets' properties, run on stable Rust for a few seconds each,
//! so that CI checks them on every change without `cargo fuzz`: inputs come
//! from a fixed-seed generator that mutates valid seeds (the dictionaries'
//! words, presets, IDs) and mixes in random bytes, which reaches the
//! parsers' accepting paths far more often than noise alone would.
//!
//! `FUZZ_PROPERTY_SECONDS` (default 3) bounds each target's run.

use std::time::{Duration, Instant};

use snowflake_fuzz::targets;

/// xorshift64*: fixed seed, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Words from a libFuzzer dictionary file (`"..."` per line).
fn dictionary(name: &str) -> Vec<Vec<u8>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let start = l.find('"')?;
            let end = l.rfind('"')?;
            (end > start).then(|| l[start + 1..end].replace("\\\\", "\\").into_bytes())
        })
        .collect()
}

/// One input: a seed, spliced with words and mutated, or plain noise.
fn input(rng: &mut Rng, seeds: &[Vec<u8>], words: &[Vec<u8>]) -> Vec<u8> {
    let mut out = if seeds.is_empty() || rng.below(4) == 0 {
        (0..rng.below(64)).map(|_| rng.next() as u8).collect()
    } else {
        seeds[rng.below(seeds.len())].clone()
    };
    for _ in 0..rng.below(4) {
        match rng.below(4) {
            0 if !out.is_empty() => {
                let at = rng.below(out.len());
                out[at] = rng.next() as u8;
            }
            1 if !words.is_empty() => {
                let at = rng.below(out.len() + 1);
                let word = &words[rng.below(words.len())];
                out.splice(at..at, word.iter().copied());
            }
            2 if !out.is_empty() => {
                let at = rng.below(out.len());
                out.truncate(at);
            }
            _ => out.push(b"0123456789,:xabcdefz-"[rng.below(21)]),
        }
    }
    out
}

fn run(target: fn(&[u8]), seeds: Vec<Vec<u8>>, words: Vec<Vec<u8>>) -> u64 {
    let seconds = std::env::var("FUZZ_PROPERTY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    while Instant::now() < deadline {
        for _ in 0..256 {
            let data = input(&mut rng, &seeds, &words);
            target(&data);
            runs += 1;
        }
    }
    assert!(runs > 1000, "only {runs} inputs ran");
    runs
}

fn text(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// A seed of typed input: the fixed-size `head` a target reads first, then
/// `text`.
fn typed(head: &[u8], text: &str) -> Vec<u8> {
    [head, text.as_bytes()].concat()
}

#[test]
fn parse_id() {
    let seeds = text(&[
        "1541815603606036480",
        "0xfa021000",
        "18446744073709551615",
        "0",
    ]);
    run(targets::parse_id::run, seeds, dictionary("parse_id.dict"));
}

#[test]
fn parse_text() {
    // The first byte picks the form; the rest is the text.
    let seeds = [
        (0u8, "4194439168"),
        (1, "fa021000"),
        (2, "0000003Z08G00"),
        (3, "000004aCTnu"),
        (4, "7Wm6b1"),
    ]
    .iter()
    .map(|&(form, text)| typed(&[form], text))
    .collect();
    run(
        targets::parse_text::run,
        seeds,
        dictionary("parse_text.dict"),
    );
}

#[test]
fn parse_layout() {
    // Typed input: fixed-size numbers first, the spec takes the rest.
    let seeds = [
        "twitter",
        "discord",
        "sonyflake",
        "js53",
        "time:41,datacenter:5,machine:5,sequence:12",
        "time:29,worker:21,sequence:13",
        "time:41,worker:6,sequence:6",
    ]
    .iter()
    .flat_map(|spec| [[0u8; 90], [1u8; 90], [0x55u8; 90]].map(|head| typed(&head, spec)))
    .collect();
    run(
        targets::parse_layout::run,
        seeds,
        dictionary("parse_layout.dict"),
    );
}

#[test]
fn parse_time() {
    let seeds = text(&[
        "2010-11-04T01:42:54.657Z",
        "1969-12-31T23:59:59.9995Z",
        "2016-12-31T23:59:60+01:00",
        "2024-02-29 12:00:00.123456789-05:30",
        "+292278994-08-17T07:12:55.807Z",
        "-292275055-05-16T16:47:04.192Z",
        "0000-01-01T00:00:00+23:59",
        "9999-12-31T23:59:59.999-23:59",
    ]);
    run(
        targets::parse_time::run,
        seeds,
        dictionary("parse_time.dict"),
    );
}

#[test]
fn decode() {
    let seeds = vec![
        vec![0u8; 9],
        vec![0xff; 9],
        vec![3, 0, 0, 0, 0, 0, 0, 0, 0x15],
    ];
    run(targets::decode::run, seeds, Vec::new());
}

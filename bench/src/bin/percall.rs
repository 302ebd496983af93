//! One generator's `next_id` in a loop, for counting instructions per call
//! under callgrind beside the peers, in one run (`bench/callgrind-peers.sh`):
//!
//! ```text
//! percall ours-cached|ours-system|ours-tsc|ferroid|snowflaked|rs-snowflake COUNT
//! ```
//!
//! Each loop is a function of its own (`run_*`) so that callgrind counts only
//! it (`--toggle-collect`), not the clock threads that ours and ferroid start,
//! whose work grows with the (slowed-down) running time, not with the calls.
//! Under callgrind a call takes about a microsecond, so no generator here ever
//! uses up a millisecond's 4,096 IDs and waits: what is counted is the fast path.

use std::hint::black_box;
use std::process::ExitCode;

use snowflake_bench::{Ferroid, OursCached, OursSystem, OursTsc, RsSnowflake, Snowflaked, Subject};

#[inline(never)]
fn run_ours_cached(n: u64) {
    let generator = OursCached::generator();
    for _ in 0..n {
        black_box(generator.next_id().ok());
    }
}

#[inline(never)]
fn run_ours_system(n: u64) {
    let OursSystem(generator) = OursSystem::build();
    for _ in 0..n {
        black_box(generator.next_id().ok());
    }
}

#[inline(never)]
fn run_ours_tsc(n: u64) {
    let generator = OursTsc::generator();
    for _ in 0..n {
        black_box(generator.next_id().ok());
    }
}

#[inline(never)]
fn run_ferroid(n: u64) {
    let generator = Ferroid::generator();
    for _ in 0..n {
        black_box(generator.next_id(Ferroid::backoff).to_raw());
    }
}

#[inline(never)]
fn run_snowflaked(n: u64) {
    let generator = Snowflaked::generator();
    for _ in 0..n {
        black_box(generator.generate::<i64>());
    }
}

#[inline(never)]
fn run_rs_snowflake(n: u64) {
    let mut generator = RsSnowflake::generator();
    for _ in 0..n {
        black_box(generator.real_time_generate());
    }
}

#[allow(clippy::print_stderr)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(which), Some(n)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!(
            "usage: percall ours-cached|ours-system|ours-tsc|ferroid|snowflaked|rs-snowflake COUNT"
        );
        return ExitCode::from(2);
    };
    match which.as_str() {
        "ours-cached" => run_ours_cached(n),
        "ours-system" => run_ours_system(n),
        "ours-tsc" => {
            // Calibrate the counter (up to 200 ms of timing loops) outside
            // the counted loop: its instructions vary from run to run.
            drop(OursTsc::generator());
            run_ours_tsc(n)
        }
        "ferroid" => run_ferroid(n),
        "snowflaked" => run_snowflaked(n),
        "rs-snowflake" => run_rs_snowflake(n),
        _ => {
            eprintln!("unknown generator {which}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

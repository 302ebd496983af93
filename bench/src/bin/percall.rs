//! One generator's `next_id` in a loop, for counting instructions per call
//! under callgrind beside the peers, in one run (`bench/callgrind-peers.sh`):
//!
//! ```text
//! percall ours-cached|ours-system|ours-tsc|ferroid|snowflaked|rs-snowflake COUNT
//! ```
//!
//! The loop is `run_calls`, one copy per generator, so that callgrind counts
//! only it (`--toggle-collect`), not the generator's construction (the
//! time-stamp counter's calibration among it, whose instructions vary from
//! run to run) nor the clock threads that ours and ferroid start, whose work
//! grows with the (slowed-down) running time, not with the calls.
//! Under callgrind a call takes about a microsecond, so no generator here ever
//! uses up a millisecond's 4,096 IDs and waits: what is counted is the fast path.

use std::hint::black_box;
use std::process::ExitCode;

use snowflake_bench::{Ferroid, OursCached, OursSystem, OursTsc, RsSnowflake, Snowflaked};

/// `n` calls of `call` on `generator`, each result kept from the optimiser.
/// The generator is moved in, a local of the loop as it would be of a
/// caller's (behind a reference, it costs an instruction a call more).
#[inline(never)]
fn run_calls<G, T>(n: u64, mut generator: G, call: impl Fn(&mut G) -> T) {
    for _ in 0..n {
        black_box(call(&mut generator));
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
        "ours-cached" => run_calls(n, OursCached::generator(), |g| g.next_id().ok()),
        "ours-system" => run_calls(n, OursSystem::generator(), |g| g.next_id().ok()),
        "ours-tsc" => run_calls(n, OursTsc::generator(), |g| g.next_id().ok()),
        "ferroid" => run_calls(n, Ferroid::generator(), |g| {
            g.next_id(Ferroid::backoff).to_raw()
        }),
        "snowflaked" => run_calls(n, Snowflaked::generator(), |g| g.generate::<i64>()),
        "rs-snowflake" => run_calls(n, RsSnowflake::generator(), |g| g.real_time_generate()),
        _ => {
            eprintln!("unknown generator {which}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

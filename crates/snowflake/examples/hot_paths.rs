//! The hot paths, one at a time, for counting instructions under callgrind
//! (`scripts/callgrind-guard`): `hot_paths OP N` runs OP N times.
//!
//! The generator runs on a `ManualClock` that the loop moves on by one
//! millisecond per 4,096 IDs, so the work is the same on every run and on
//! every machine: no waiting, no scheduler, nothing but instructions
//! (`next_id_system` alone reads the real clock; see there). The
//! guard runs each OP at N and at 2N and divides the difference by N, which
//! leaves out the process's start-up.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;

use snowflake::{Clock, Generator, Id, Layout, ManualClock, SystemClock};

const START_MS: i64 = 1_700_000_000_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(op), Some(n)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
    ) else {
        return usage();
    };
    let result = match op.as_str() {
        "next_id" => next_id(n),
        "next_id_new_unit" => next_id_new_unit(n),
        "next_id_system" => next_id_system(n),
        "next_ids_4096" => next_ids(n),
        "compose" => compose(n),
        "decode" => decode(n),
        "parse" => parse(n),
        "system_clock" => {
            for _ in 0..n {
                black_box(SystemClock.now_ms());
            }
            Ok(())
        }
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln_error(&err);
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::print_stderr)]
fn usage() -> ExitCode {
    eprintln!(
        "usage: hot_paths next_id|next_id_new_unit|next_id_system|next_ids_4096|compose|decode|parse|system_clock COUNT"
    );
    ExitCode::from(2)
}

#[allow(clippy::print_stderr)]
fn eprintln_error(err: &snowflake::Error) {
    eprintln!("error: {err}");
}

fn generator(clock: &ManualClock) -> Result<Generator<&ManualClock>, snowflake::Error> {
    Generator::builder(Layout::twitter())
        .node(&[("datacenter", 1), ("machine", 7)])
        .clock(clock)
        .build()
}

fn next_id(n: u64) -> Result<(), snowflake::Error> {
    let clock = ManualClock::new(START_MS);
    let generator = generator(&clock)?;
    for i in 0..n {
        if i % 4096 == 4095 {
            clock.advance(1);
        }
        black_box(generator.next_id()?);
    }
    Ok(())
}

/// `next_id` with the clock a millisecond on at every call: each call
/// starts a new time unit, as in a service that issues fewer IDs than one a
/// millisecond, where `next_id` takes this path every time. Its generator
/// holds the clock in an `Arc`, a type of its own, so that this second
/// caller of `next_id` does not change how the compiler builds the first.
fn next_id_new_unit(n: u64) -> Result<(), snowflake::Error> {
    let clock = Arc::new(ManualClock::new(START_MS));
    let generator = Generator::builder(Layout::twitter())
        .node(&[("datacenter", 1), ("machine", 7)])
        .clock(Arc::clone(&clock))
        .build()?;
    for _ in 0..n {
        clock.advance(1);
        black_box(generator.next_id()?);
    }
    Ok(())
}

/// `next_id` on the real clock, read at every call. Under callgrind a call
/// takes about a microsecond, so a millisecond's 4,096 IDs are never used up
/// and nothing waits: what is counted is the clock read and the fast path.
fn next_id_system(n: u64) -> Result<(), snowflake::Error> {
    let generator = Generator::builder(Layout::twitter())
        .node(&[("datacenter", 1), ("machine", 7)])
        .build()?;
    for _ in 0..n {
        black_box(generator.next_id()?);
    }
    Ok(())
}

fn next_ids(n: u64) -> Result<(), snowflake::Error> {
    let clock = ManualClock::new(START_MS);
    let generator = generator(&clock)?;
    for _ in 0..n {
        clock.advance(1);
        for id in generator.next_ids(4096)? {
            black_box(id);
        }
    }
    Ok(())
}

fn compose(n: u64) -> Result<(), snowflake::Error> {
    let twitter = Layout::twitter();
    for i in 0..n {
        let at = black_box(START_MS + (i % 1000) as i64);
        black_box(twitter.compose(at, &[("datacenter", 1), ("machine", 7), ("sequence", 5)])?);
    }
    Ok(())
}

fn decode(n: u64) -> Result<(), snowflake::Error> {
    let twitter = Layout::twitter();
    for i in 0..n {
        let decoded = twitter.decode(black_box(Id::new(1541815603606036480 + (i % 4096))))?;
        black_box((decoded.timestamp_ms(), decoded.field("machine")));
    }
    Ok(())
}

fn parse(n: u64) -> Result<(), snowflake::Error> {
    for _ in 0..n {
        black_box(Id::parse(black_box("1541815603606036480"))?);
    }
    Ok(())
}

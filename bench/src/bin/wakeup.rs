//! How late a thread wakes, and what that costs a generator at its ceiling.
//!
//! ```text
//! cargo run --release --bin wakeup -- sleep [--slack NS] [--gap-us 700] [--count 2000]
//! cargo run --release --bin wakeup -- generator [--slack NS] [--secs 2]
//! ```
//!
//! * `sleep`: `thread::sleep(gap)` COUNT times; the distribution of the
//!   overshoot (time slept less the gap).
//! * `generator`: our generator on the `SystemClock`, called as fast as this
//!   thread can for SECS: for every millisecond, how late its first ID came
//!   after the millisecond began (the wake-up error of the wait, plus one
//!   call); the share of the 4,096,000/s ceiling reached; and this thread's
//!   CPU time as a share of the wall time.
//!
//! `--slack NS` first sets this thread's timer slack (Linux's default is
//! 50 µs: a sleep may end that much after its deadline, so that the kernel
//! can fire timers together) through `/proc/self/timerslack_ns`, which needs
//! no `libc`: it names the main thread, and the measurement runs on it.
//! Every report starts with the load average, since a busy machine wakes
//! threads late whatever the mechanism.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use snowflake::{Generator, Layout};
use snowflake_bench::wall_ns;

#[allow(clippy::print_stdout, clippy::print_stderr)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: u64| -> Option<u64> {
        match args.iter().position(|a| a == name) {
            None => Some(default),
            Some(i) => args.get(i + 1)?.parse().ok(),
        }
    };
    let (Some(slack), Some(gap_us), Some(count), Some(secs)) = (
        flag("--slack", 0),
        flag("--gap-us", 700),
        flag("--count", 2000),
        flag("--secs", 2),
    ) else {
        eprintln!(
            "usage: wakeup sleep|generator [--slack NS] [--gap-us US] [--count N] [--secs S]"
        );
        return ExitCode::from(2);
    };
    if slack > 0 {
        if let Err(e) = std::fs::write("/proc/self/timerslack_ns", slack.to_string()) {
            eprintln!("cannot set the timer slack: {e}");
            return ExitCode::FAILURE;
        }
    }
    let slack_now = std::fs::read_to_string("/proc/self/timerslack_ns").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
    println!("timer slack: {} ns", slack_now.trim());
    match args.first().map(String::as_str) {
        Some("sleep") => sleep(Duration::from_micros(gap_us), count),
        Some("generator") => generator(Duration::from_secs(secs)),
        _ => {
            eprintln!(
                "usage: wakeup sleep|generator [--slack NS] [--gap-us US] [--count N] [--secs S]"
            );
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn sleep(gap: Duration, count: u64) {
    let mut late_ns: Vec<i64> = (0..count)
        .map(|_| {
            let start = Instant::now();
            std::thread::sleep(gap);
            start.elapsed().as_nanos() as i64 - gap.as_nanos() as i64
        })
        .collect();
    print_distribution(
        &format!("sleep({} µs) overshoot", gap.as_micros()),
        &mut late_ns,
    );
}

#[allow(clippy::print_stdout)]
fn generator(window: Duration) {
    let generator = Generator::new(Layout::twitter(), &[]).expect("twitter layout builds");
    let twitter = Layout::twitter();
    // Per millisecond: how late its first ID came, and how many it got.
    let mut units: Vec<(i64, u64)> = Vec::with_capacity(window.as_millis() as usize + 16);
    let (mut late, mut in_unit) = (0i64, 0u64);
    let (mut issued, mut errors, mut skipped) = (0u64, 0u64, 0u64);
    let mut last_unit = u64::MAX;
    let cpu0 = thread_cpu_ns();
    let start = Instant::now();
    loop {
        let Ok(id) = generator.next_id() else {
            errors += 1;
            continue;
        };
        issued += 1;
        // The time field is compared raw; the wall clock is read and the ID
        // decoded only for the first ID of a millisecond.
        let unit = id.get() >> 22;
        if unit != last_unit {
            let at = wall_ns();
            if last_unit != u64::MAX {
                units.push((late, in_unit));
                skipped += unit - last_unit - 1;
            }
            last_unit = unit;
            in_unit = 0;
            late = twitter
                .decode(id)
                .map_or(0, |d| at - d.timestamp_ms() * 1_000_000);
            if start.elapsed() >= window {
                break;
            }
        }
        in_unit += 1;
    }
    let wall = start.elapsed();
    let cpu = thread_cpu_ns() - cpu0;
    let ceiling = 4_096_000.0 * wall.as_secs_f64();
    println!(
        "share of the ceiling: {:.4} ({issued} IDs in {:.3} s), CPU: {:.1} % of a core, errors: {errors}",
        issued as f64 / ceiling,
        wall.as_secs_f64(),
        cpu as f64 / wall.as_nanos() as f64 * 100.0
    );
    // The first millisecond began before the run: it says nothing.
    units.remove(0);
    let short: Vec<&(i64, u64)> = units.iter().filter(|(_, n)| *n < 4096).collect();
    let missing: u64 = short.iter().map(|(_, n)| 4096 - n).sum::<u64>() + skipped * 4096;
    println!(
        "milliseconds short of 4,096 IDs: {} of {}, none at all: {skipped}; IDs missing: {missing} ({:.4} of the ceiling)",
        short.len(),
        units.len() + skipped as usize,
        missing as f64 / ((units.len() as u64 + skipped) * 4096) as f64
    );
    let mut short_late: Vec<i64> = short.iter().map(|(l, _)| *l).collect();
    if !short_late.is_empty() {
        print_distribution(
            "  first ID of a short millisecond after it began",
            &mut short_late,
        );
    }
    let mut all_late: Vec<i64> = units.iter().map(|(l, _)| *l).collect();
    print_distribution("first ID after the millisecond began", &mut all_late);
}

/// This thread's time on a CPU, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[allow(clippy::print_stdout)]
fn print_distribution(what: &str, ns: &mut [i64]) {
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
    println!(
        "{what}, µs over {} samples: min {:.1}, p50 {:.1}, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
        ns.len(),
        at(0.0),
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        at(1.0)
    );
}

//! What a background clock costs while no IDs are asked for: the CPU time of
//! this process over a few seconds in which it only sleeps, after starting
//! our cached clock's refresher or ferroid's ticker.
//!
//! ```text
//! cargo run --release --bin idle -- ours-cached   # or: ferroid, none
//! ```

use std::time::{Duration, Instant};

use ferroid::time::TimeSource;

/// CPU time of every thread of this process, in nanoseconds.
fn process_cpu_ns() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task is readable")
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn main() {
    let which = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "ours-cached".into());
    match which.as_str() {
        "ours-cached" => {
            snowflake::CachedClock::shared();
        }
        "ferroid" => {
            let clock = ferroid::time::MonotonicClock::<1>::default();
            std::hint::black_box(TimeSource::<u64>::current_millis(&clock));
        }
        "none" => {}
        other => panic!("unknown clock {other:?}: ours-cached, ferroid or none"),
    }
    std::thread::sleep(Duration::from_millis(100));
    let (cpu0, start) = (process_cpu_ns(), Instant::now());
    std::thread::sleep(Duration::from_secs(3));
    let (cpu, wall) = (process_cpu_ns() - cpu0, start.elapsed());
    println!(
        "{which}: {:.1} % of one core while idle",
        100.0 * cpu as f64 / wall.as_nanos() as f64
    );
}

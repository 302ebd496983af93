//! More threads than cores share one of our generators, optionally beside
//! busy threads that only burn CPU, while a watcher checks that the wall
//! clock itself never steps back. Prints the generator's stats and errors.
//!
//! ```text
//! cargo run --release --bin oversubscribed [GENERATING_THREADS [BUSY_THREADS [SECONDS [snowflaked]]]]
//! ```
//!
//! Defaults: 2 generating threads, 4 busy threads, 5 s, our generator on the
//! system clock; `snowflaked` as the fourth argument runs that peer instead,
//! for comparison (it has no stats, so only the rate is printed). On a 2-core machine
//! this shows whether preemption alone (no clock step) makes the generator
//! count `clock_backwards`, or fail with a clock-went-backwards error, and
//! how far below the ceiling a generator falls when it must win a core back
//! after each wait.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use snowflake::{Generator, Layout};

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map(|s| s.parse().expect("a whole number"))
        .unwrap_or(default)
}

fn main() {
    let (threads, busy, secs) = (arg(1, 2), arg(2, 4), arg(3, 5));
    if std::env::args().nth(4).as_deref() == Some("snowflaked") {
        return peer(threads, busy, secs);
    }
    let generator =
        Arc::new(Generator::new(Layout::twitter(), &[]).expect("twitter layout builds"));
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for _ in 0..busy {
        handles.push(burn(stop.clone()));
    }
    for _ in 0..threads {
        let (generator, stop, errors) = (generator.clone(), stop.clone(), errors.clone());
        handles.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Err(e) = generator.next_id() {
                    if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                        println!("error: {e}");
                    }
                }
            }
        }));
    }
    let watcher = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut last = SystemTime::now();
            let mut worst = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                let now = SystemTime::now();
                if let Err(back) = now.duration_since(last) {
                    worst = worst.max(back.duration());
                }
                last = now;
                std::thread::sleep(Duration::from_micros(50));
            }
            worst
        })
    };
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for handle in handles {
        handle.join().expect("a thread panicked");
    }
    let worst = watcher.join().expect("the watcher panicked");
    let elapsed = start.elapsed().as_secs_f64();
    let stats = generator.stats();
    println!(
        "{threads} generating + {busy} busy threads, {elapsed:.1} s: {:.0} IDs/s ({:.2} % of 4,096,000), \
         {} errors, wall clock's largest step back {worst:?}\n{stats:?}",
        stats.issued as f64 / elapsed,
        100.0 * stats.issued as f64 / elapsed / 4_096_000.0,
        errors.load(Ordering::Relaxed),
    );
}

fn burn(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut x = 0u64;
        while !stop.load(Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
    })
}

fn peer(threads: u64, busy: u64, secs: u64) {
    let generator = Arc::new(snowflake_bench::Snowflaked::generator());
    let stop = Arc::new(AtomicBool::new(false));
    let issued = Arc::new(AtomicU64::new(0));
    let mut handles: Vec<_> = (0..busy).map(|_| burn(stop.clone())).collect();
    for _ in 0..threads {
        let (generator, stop, issued) = (generator.clone(), stop.clone(), issued.clone());
        handles.push(std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                std::hint::black_box(generator.generate::<i64>());
                n += 1;
            }
            issued.fetch_add(n, Ordering::Relaxed);
        }));
    }
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for handle in handles {
        handle.join().expect("a thread panicked");
    }
    let rate = issued.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    println!(
        "snowflaked, {threads} generating + {busy} busy threads: {rate:.0} IDs/s ({:.2} % of 4,096,000)",
        100.0 * rate / 4_096_000.0
    );
}

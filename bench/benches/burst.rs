//! The uncontended cost of one call in a burst that does not use up the
//! sequence, for our generator and its peers, with bare baselines beside
//! them; and the amortised cost per ID of `next_ids(4096)`.
//!
//! ```text
//! cargo bench --bench burst
//! ```
//!
//! A tight loop of `next_id()` would exhaust the 4,096 IDs of a millisecond
//! in well under a millisecond and then measure the wait for the next one.
//! So calls are timed in bursts: `CHUNK` calls, then an untimed spin of
//! `GAP` before the next burst. Bursts start at least `GAP` apart, so at most
//! two of them (2,000 IDs) fall into one millisecond of the wall clock, and
//! a clock that lags (a cached clock whose refresher is late) can stretch a
//! millisecond to twice its length before a burst runs into the 4,096th ID;
//! sonyflake, with 256 IDs per 10 ms, gets bursts of 50 at least 2.5 ms
//! apart. Our generators' `exhaustion_waits` are printed after their runs
//! to show that no burst waited. Criterion only sees the timed part, so the
//! measurement times below are timed time: the wall time is many times
//! longer.

use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use snowflake::{CachedClock, Clock, Generator, Layout, SystemClock};
use snowflake_bench::{
    BATCH, Ferroid, IdGenerator, OursCached, OursTsc, RsSnowflake, Snowflaked, Sonyflake, wall_ns,
};
use snowflake_tsc::TscClock;

const CHUNK: u64 = 1000;
const GAP: Duration = Duration::from_micros(500);
const SONYFLAKE_CHUNK: u64 = 50;
const SONYFLAKE_GAP: Duration = Duration::from_micros(2500);

/// Times `iters` calls of `f` in bursts of `chunk`, spinning untimed for
/// `gap` after each burst; what each call returns is kept from the optimiser.
fn bursts<T>(iters: u64, chunk: u64, gap: Duration, mut f: impl FnMut() -> T) -> Duration {
    let mut timed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(chunk);
        let start = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        timed += start.elapsed();
        left -= n;
        if !gap.is_zero() {
            let resume = Instant::now() + gap;
            while Instant::now() < resume {
                std::hint::spin_loop();
            }
        }
    }
    timed
}

/// A benchmark group whose calls are timed in bursts of `chunk`, `gap`
/// apart.
struct Bursts<'g, 'c> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    chunk: u64,
    gap: Duration,
}

impl<'g, 'c> Bursts<'g, 'c> {
    fn new(group: &'g mut BenchmarkGroup<'c, WallTime>, chunk: u64, gap: Duration) -> Self {
        Bursts { group, chunk, gap }
    }

    /// Benchmarks one call of `f`, under `name`.
    fn per_call<T>(&mut self, name: &str, mut f: impl FnMut() -> T) {
        let (chunk, gap) = (self.chunk, self.gap);
        self.group.bench_function(name, |b| {
            b.iter_custom(|iters| bursts(iters, chunk, gap, &mut f))
        });
    }
}

fn baselines(c: &mut Criterion) {
    let mut group = c.benchmark_group("baseline");
    group
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    // Back to back: nothing here runs out.
    let mut timed = Bursts::new(&mut group, CHUNK, Duration::ZERO);
    let counter = AtomicU64::new(0);
    timed.per_call("AtomicU64::fetch_add", || {
        counter.fetch_add(1, Ordering::Relaxed)
    });
    timed.per_call("SystemTime::now", SystemTime::now);
    timed.per_call("SystemClock::now_ms", || SystemClock.now_ms());
    let tsc = TscClock::shared();
    timed.per_call("TscClock::now_ms", || tsc.now_ms());
    let cached = CachedClock::shared();
    timed.per_call("CachedClock::now_ms", || cached.now_ms());
    group.finish();
}

fn next_id(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id");
    group
        .warm_up_time(Duration::from_millis(50))
        .measurement_time(Duration::from_millis(300));

    let ours = Generator::new(Layout::twitter(), &[]).expect("twitter layout builds");
    let mut timed = Bursts::new(&mut group, CHUNK, GAP);
    timed.per_call("ours-system", || ours.next_id().expect("an ID"));
    report("ours-system", ours.stats());

    let cached = OursCached::generator();
    timed.per_call("ours-cached", || cached.next_id().expect("an ID"));
    report("ours-cached", cached.stats());

    let tsc = OursTsc::generator();
    timed.per_call("ours-tsc", || tsc.next_id().expect("an ID"));
    report("ours-tsc", tsc.stats());

    let snowflaked = Snowflaked::generator();
    timed.per_call("snowflaked", || snowflaked.generate::<i64>());

    let mut rs = RsSnowflake::generator();
    timed.per_call("rs-snowflake (owned, &mut)", || rs.real_time_generate());
    let rs = Mutex::new(RsSnowflake::generator());
    timed.per_call("rs-snowflake (in a Mutex)", || {
        rs.lock().expect("not poisoned").real_time_generate()
    });

    let ferroid = Ferroid::generator();
    timed.per_call("ferroid", || ferroid.next_id(Ferroid::backoff));

    let mut idgenerator = IdGenerator::generator();
    timed.per_call("idgenerator (owned, &mut)", || idgenerator.next_id());
    let idgenerator = Mutex::new(IdGenerator::generator());
    timed.per_call("idgenerator (in a Mutex)", || {
        idgenerator.lock().expect("not poisoned").next_id()
    });

    // Its bursts are 20 times shorter and 8 times further apart.
    group
        .warm_up_time(Duration::from_millis(5))
        .measurement_time(Duration::from_millis(20));
    let sonyflake = Sonyflake::generator();
    Bursts::new(&mut group, SONYFLAKE_CHUNK, SONYFLAKE_GAP)
        .per_call("sonyflake", || sonyflake.next_id().expect("an ID"));
    group.finish();
}

/// Asks for a whole millisecond of IDs, timing from the call until `BATCH`
/// IDs are in hand; between batches, waits untimed until 300 µs into a
/// fresh millisecond, so that a cached clock has seen it too.
fn batches<C: Clock>(
    generator: &Generator<C>,
    iters: u64,
    sink: &mut Option<Vec<u64>>,
) -> Duration {
    let mut timed = Duration::ZERO;
    for _ in 0..iters {
        let fresh_ns = (wall_ns() / 1_000_000 + 1) * 1_000_000 + 300_000;
        while wall_ns() < fresh_ns {
            std::hint::spin_loop();
        }
        if let Some(buf) = sink.as_mut() {
            buf.clear();
        }
        let start = Instant::now();
        let mut got = 0;
        while got < BATCH {
            let batch = generator.next_ids(BATCH - got).expect("a batch");
            got += batch.len() as u64;
            match sink.as_mut() {
                Some(buf) => buf.extend(batch.map(|id| id.get())),
                None => {
                    black_box(batch);
                }
            }
        }
        timed += start.elapsed();
        black_box(sink.as_ref().map(|b| b.last()));
    }
    timed
}

fn next_ids(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_ids(4096)");
    group
        .throughput(Throughput::Elements(BATCH))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(5))
        .measurement_time(Duration::from_millis(20));

    let ours = Generator::new(Layout::twitter(), &[]).expect("twitter layout builds");
    group.bench_function("ours-system, claim only", |b| {
        b.iter_custom(|iters| batches(&ours, iters, &mut None))
    });
    let mut buf = Some(Vec::with_capacity(BATCH as usize));
    group.bench_function("ours-system, claim and copy into a Vec", |b| {
        b.iter_custom(|iters| batches(&ours, iters, &mut buf))
    });
    report("ours-system next_ids", ours.stats());

    let cached = OursCached::generator();
    group.bench_function("ours-cached, claim only", |b| {
        b.iter_custom(|iters| batches(&cached, iters, &mut None))
    });
    report("ours-cached next_ids", cached.stats());
    group.finish();
}

/// Says on stderr whether a burst ever ran into the end of the sequence:
/// if it did, the numbers above include waiting.
fn report(what: &str, stats: snowflake::GeneratorStats) {
    eprintln!(
        "{what}: issued {} exhaustion_waits {} clock_backwards {}",
        stats.issued, stats.exhaustion_waits, stats.clock_backwards
    );
}

criterion_group!(benches, baselines, next_id, next_ids);
criterion_main!(benches);

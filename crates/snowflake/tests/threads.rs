//! Many threads on one generator: no ID twice, no batch inside another,
//! and the generator's count of what it issued equals what was seen.

use std::collections::HashSet;
use std::sync::Arc;

use snowflake::{Clock, Generator, Id, Layout, SystemClock};

/// Eight threads share one generator on the real clock; sorting finds any
/// duplicate, and every ID's time lies within the run's wall-clock window.
#[test]
fn stress_eight_threads_share_one_generator() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 1_000_000;
    let layout = Layout::twitter();
    let generator =
        Arc::new(Generator::new(layout.clone(), &[("datacenter", 3), ("machine", 9)]).unwrap());
    let start = SystemClock.now_ms();
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(generator.next_id().unwrap().get());
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::with_capacity(THREADS * PER_THREAD);
    for handle in handles {
        let ids = handle.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread saw IDs go down"
        );
        all.extend(ids);
    }
    let end = SystemClock.now_ms();
    all.sort_unstable();
    let duplicates = all.windows(2).filter(|w| w[0] == w[1]).count();
    assert_eq!(duplicates, 0);
    let first = layout.decode(Id::new(all[0])).unwrap().timestamp_ms();
    let last = layout
        .decode(Id::new(*all.last().unwrap()))
        .unwrap()
        .timestamp_ms();
    assert!(
        first >= start && last <= end,
        "{start} <= {first}..{last} <= {end}"
    );
    assert_eq!(generator.stats().issued, (THREADS * PER_THREAD) as u64);
}

/// Four threads take batches of up to 300 on the real clock. Every batch
/// holds at least one ID (a call with `n > 0` never comes back empty), its
/// IDs step by one sequence number, and no batch overlaps another, from its
/// own thread or any other: sorted by their first IDs, each ends below the
/// next one's start. The generator's count is exactly the IDs seen.
#[test]
fn batches_from_many_threads_never_overlap() {
    const THREADS: usize = 4;
    const CALLS: usize = 200;
    const WANT: u64 = 300;
    let generator = Arc::new(Generator::new(Layout::twitter(), &[]).unwrap());
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                (0..CALLS)
                    .map(|_| generator.next_ids(WANT).unwrap().map(Id::get).collect())
                    .collect::<Vec<Vec<u64>>>()
            })
        })
        .collect();
    let mut batches = Vec::with_capacity(THREADS * CALLS);
    for handle in handles {
        let mine = handle.join().unwrap();
        for pair in mine.windows(2) {
            assert!(
                pair[0].last() < pair[1].first(),
                "a thread's batches went down"
            );
        }
        batches.extend(mine);
    }
    for batch in &batches {
        assert!(!batch.is_empty(), "an empty batch for a request of {WANT}");
        assert!(batch.len() as u64 <= WANT, "{} IDs for {WANT}", batch.len());
        assert!(
            batch.windows(2).all(|w| w[1] == w[0] + 1),
            "not consecutive"
        );
    }
    batches.sort_unstable_by_key(|b| b[0]);
    for pair in batches.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            a[a.len() - 1] < b[0],
            "batch {}..={} reaches into one from {}",
            a[0],
            a[a.len() - 1],
            b[0]
        );
    }
    let seen: usize = batches.iter().map(Vec::len).sum();
    assert_eq!(generator.stats().issued, seen as u64);
    // The count adds up to IDs that are all different.
    let distinct: HashSet<u64> = batches.iter().flatten().copied().collect();
    assert_eq!(distinct.len(), seen);
}

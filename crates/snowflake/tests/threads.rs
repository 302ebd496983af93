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

#[test]
fn batches_from_many_threads_never_overlap() {
    let generator = Arc::new(Generator::new(Layout::twitter(), &[]).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..200 {
                    ids.extend(generator.next_ids(300).unwrap().map(Id::get));
                }
                ids
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
}

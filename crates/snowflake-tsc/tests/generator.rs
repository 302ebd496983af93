//! The generator on the counter clock: IDs carry the wall clock's time, and
//! many threads share it without a duplicate.

use std::collections::HashSet;
use std::sync::Arc;

use snowflake::{Clock, Generator, Layout, SystemClock};
use snowflake_tsc::TscClock;

#[test]
fn ids_carry_the_wall_clocks_time() {
    let generator = Generator::builder(Layout::twitter())
        .clock(TscClock::shared())
        .build()
        .unwrap();
    let twitter = Layout::twitter();
    for _ in 0..50_000 {
        let before = SystemClock.now_ms();
        let id = generator.next_id().unwrap();
        let after = SystemClock.now_ms();
        let time = twitter.decode(id).unwrap().timestamp_ms();
        assert!(time <= after, "ID time {time} is ahead of {after}");
        assert!(
            time >= before - 1,
            "ID time {time} is over 1 ms behind {before}"
        );
    }
}

#[test]
fn threads_sharing_it_never_get_the_same_id() {
    let generator = Arc::new(
        Generator::builder(Layout::twitter())
            .clock(TscClock::shared())
            .build()
            .unwrap(),
    );
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(100_000);
                for _ in 0..100_000 {
                    ids.push(generator.next_id().unwrap());
                }
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "out of order in a thread"
                );
                ids
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            assert!(seen.insert(id), "{id} issued twice");
        }
    }
    assert_eq!(seen.len(), 400_000);
}

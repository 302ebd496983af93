//! Model checks of the generator's compare-and-swap step: loom runs every
//! interleaving of the threads' atomic operations. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p snowflake --lib --release loom`.

use crate::clock::ManualClock;
use crate::generator::Generator;
use crate::layout::Layout;
use alloc::vec::Vec;
use loom::sync::Arc;
use loom::thread;

/// Two IDs per time unit, so that threads also race through exhaustion
/// and the move to the next unit.
fn tiny() -> Arc<Generator<ManualClock>> {
    let layout = Layout::parse("time:62,sequence:1").unwrap();
    Arc::new(
        Generator::builder(layout)
            .clock(ManualClock::new(1))
            .build()
            .unwrap(),
    )
}

fn run(threads: usize, per_thread: usize) {
    loom::model(move || {
        let generator = tiny();
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let generator = generator.clone();
                thread::spawn(move || {
                    let ids: Vec<u64> = (0..per_thread)
                        .map(|_| generator.next_id().unwrap().get())
                        .collect();
                    assert!(ids.windows(2).all(|w| w[0] < w[1]));
                    ids
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), threads * per_thread, "duplicate IDs");
        assert_eq!(generator.stats().issued, (threads * per_thread) as u64);
    });
}

#[test]
fn loom_two_threads_two_ids_each() {
    run(2, 2);
}

#[test]
fn loom_three_threads_one_id_each() {
    run(3, 1);
}

#[test]
fn loom_batches_do_not_overlap() {
    loom::model(|| {
        let generator = tiny();
        let other = generator.clone();
        let handle = thread::spawn(move || other.next_ids(2).unwrap().collect::<Vec<_>>());
        let mine: Vec<_> = generator.next_ids(2).unwrap().collect();
        let theirs = handle.join().unwrap();
        for id in &mine {
            assert!(!theirs.contains(id));
        }
    });
}

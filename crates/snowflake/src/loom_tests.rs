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
/// and the move to the next unit; a node field set to 1 between time and
/// sequence, as in Twitter's layout, so that the generator's state (an ID
/// without its node bits) and the IDs it hands out differ.
fn tiny() -> Arc<Generator<ManualClock>> {
    tiny_with_tolerance(Generator::DEFAULT_TOLERANCE_MS)
}

fn tiny_with_tolerance(tolerance_ms: u64) -> Arc<Generator<ManualClock>> {
    let layout = Layout::parse("time:61,node:1,sequence:1").unwrap();
    Arc::new(
        Generator::builder(layout)
            .node(&[("node", 1)])
            .clock(ManualClock::new(1))
            .tolerance_ms(tolerance_ms)
            .build()
            .unwrap(),
    )
}

/// The node field's bit in [`tiny`]'s IDs.
const NODE_BIT: u64 = 1 << 1;

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
                    assert!(ids.iter().all(|id| id & NODE_BIT != 0), "node bit lost");
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

/// Two threads take a batch of two at once: each batch holds at least one
/// ID (a request for two never comes back empty), and the two batches lie
/// one wholly below the other, never interleaved; the generator counts
/// exactly the IDs handed out.
#[test]
fn loom_batches_do_not_overlap() {
    loom::model(|| {
        let generator = tiny();
        let other = generator.clone();
        let handle = thread::spawn(move || other.next_ids(2).unwrap().collect::<Vec<_>>());
        let mine: Vec<_> = generator.next_ids(2).unwrap().collect();
        let theirs = handle.join().unwrap();
        for batch in [&mine, &theirs] {
            assert!(!batch.is_empty(), "an empty batch");
            assert!(batch.len() <= 2);
            assert!(batch.windows(2).all(|w| w[0] < w[1]));
        }
        let (low, high) = if mine[0] < theirs[0] {
            (&mine, &theirs)
        } else {
            (&theirs, &mine)
        };
        assert!(
            low[low.len() - 1] < high[0],
            "batches interleave: {mine:?} {theirs:?}"
        );
        assert_eq!(generator.stats().issued, (mine.len() + theirs.len()) as u64);
    });
}

/// With no tolerance at all, a clock that only moves forward must never look
/// as if it went back. It would, if a call read the clock before the state:
/// descheduled between the two, it would find an ID newer than its reading.
#[test]
fn loom_forward_clock_with_zero_tolerance_never_fails() {
    loom::model(|| {
        let generator = tiny_with_tolerance(0);
        let other = generator.clone();
        let handle = thread::spawn(move || {
            other.clock().advance(1);
            other.next_id().unwrap()
        });
        let mine = generator.next_id().unwrap();
        let theirs = handle.join().unwrap();
        assert_ne!(mine, theirs);
    });
}

/// A clock set back while another thread issues: every call either issues
/// a unique ID or fails with the size of the step, never a duplicate.
#[test]
fn loom_clock_going_back_gives_errors_never_duplicates() {
    loom::model(|| {
        let generator = tiny_with_tolerance(1);
        generator.clock().set(4);
        let other = generator.clone();
        let handle = thread::spawn(move || {
            let id = other.next_id();
            other.clock().advance(-3);
            id
        });
        let mine = [generator.next_id(), generator.next_id()];
        let theirs = handle.join().unwrap();
        if let [Ok(a), Ok(b)] = &mine {
            assert!(a < b, "one thread's IDs only grow");
        }
        let mut ids = Vec::new();
        for result in mine.into_iter().chain([theirs]) {
            match result {
                Ok(id) => ids.push(id),
                Err(err) => assert!(err.clock_backwards_ms().is_some_and(|ms| ms > 1), "{err}"),
            }
        }
        let issued = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), issued, "duplicate IDs");
        assert_eq!(generator.stats().issued, issued as u64);
    });
}

/// Two generators, as two processes would each build their own, issuing
/// from one shared state: the same step over a word neither owns hands out
/// no ID twice, and every ID's time was covered by the shared mark before
/// the ID was returned.
#[test]
fn loom_two_generators_over_one_shared_state() {
    use crate::error::Error;
    use crate::generator::SharedState;
    use crate::store::SharedMark;
    use loom::sync::atomic::{AtomicI64, Ordering};

    /// Records the highest time asked for, as a durable mark would.
    struct Covered(AtomicI64);
    impl SharedMark for Covered {
        fn cover(&self, mark_ms: i64) -> Result<(), Error> {
            self.0.fetch_max(mark_ms, Ordering::SeqCst);
            Ok(())
        }
    }

    loom::model(|| {
        let layout = Layout::parse("time:61,node:1,sequence:1").unwrap();
        // A std Arc: the clock's own atomics are loom's.
        let clock = std::sync::Arc::new(ManualClock::new(1));
        let shared = Arc::new(SharedState::new());
        let mark = Arc::new(Covered(AtomicI64::new(i64::MIN)));
        let build = || {
            Generator::builder(layout.clone())
                .node(&[("node", 1)])
                .clock(clock.clone())
                .build()
                .unwrap()
        };
        let theirs = build();
        let (other_shared, other_mark) = (shared.clone(), mark.clone());
        let handle = thread::spawn(move || {
            let ids = [
                theirs.next_id_on(&*other_shared, &*other_mark).unwrap(),
                theirs.next_id_on(&*other_shared, &*other_mark).unwrap(),
            ];
            let covered = other_mark.0.load(Ordering::SeqCst);
            (ids, covered)
        });
        let mine = build();
        let ids = [
            mine.next_id_on(&*shared, &*mark).unwrap(),
            mine.next_id_on(&*shared, &*mark).unwrap(),
        ];
        let covered = mark.0.load(Ordering::SeqCst);
        let (their_ids, their_covered) = handle.join().unwrap();
        for (ids, covered) in [(ids, covered), (their_ids, their_covered)] {
            assert!(ids[0] < ids[1], "one generator's IDs only grow");
            for id in ids {
                assert!(id.get() & NODE_BIT != 0, "node bit lost");
                let time = layout.decode(id).unwrap().timestamp_ms();
                assert!(
                    time <= covered,
                    "{id:?} issued at {time} above the mark {covered}"
                );
            }
        }
        let mut all: Vec<_> = ids.into_iter().chain(their_ids).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4, "duplicate IDs");
    });
}

/// Two threads that need a new mark at once (a window of one time unit, so
/// every unit needs its own): one writes it, the other waits for the
/// writer through the store's `wait_for_writer` and takes the lock after
/// it; neither ever blocks for good, and every ID's time was covered by a
/// stored mark before the ID was returned.
#[test]
fn loom_threads_needing_a_mark_at_once_wait_for_the_writer() {
    use crate::error::Error;
    use crate::store::MarkStore;
    use loom::sync::atomic::{AtomicI64, Ordering};

    /// A mark in a loom atomic, so that the model sees its writes.
    struct Stored(Arc<AtomicI64>);
    impl MarkStore for Stored {
        fn load(&self) -> Result<Option<i64>, Error> {
            Ok(Some(self.0.load(Ordering::SeqCst)).filter(|&ms| ms != i64::MIN))
        }
        fn save(&self, mark_ms: i64) -> Result<(), Error> {
            self.0.store(mark_ms, Ordering::SeqCst);
            Ok(())
        }
    }

    loom::model(|| {
        let layout = Layout::parse("time:61,node:1,sequence:1").unwrap();
        let mark = Arc::new(AtomicI64::new(i64::MIN));
        let generator = Arc::new(
            Generator::builder(layout.clone())
                .node(&[("node", 1)])
                .clock(ManualClock::new(1))
                .reserve_ms(1)
                .store(Stored(mark.clone()))
                .build()
                .unwrap(),
        );
        let issue = {
            let layout = layout.clone();
            move |generator: &Generator<ManualClock>, mark: &AtomicI64| {
                let ids = [generator.next_id().unwrap(), generator.next_id().unwrap()];
                let covered = mark.load(Ordering::SeqCst);
                for id in ids {
                    let time = layout.decode(id).unwrap().timestamp_ms();
                    assert!(
                        time <= covered,
                        "{id:?} issued at {time} above the mark {covered}"
                    );
                }
                ids
            }
        };
        let (other, other_mark, other_issue) = (generator.clone(), mark.clone(), issue.clone());
        let handle = thread::spawn(move || other_issue(&other, &other_mark));
        let mine = issue(&generator, &mark);
        let theirs = handle.join().unwrap();
        let mut all: Vec<_> = mine.into_iter().chain(theirs).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4, "duplicate IDs");
    });
}

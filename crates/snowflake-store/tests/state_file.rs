//! The file-backed mark store under a generator: restarts from the state
//! file, files that are refused, and one generator per file at a time.

use std::sync::Arc;

use std::path::Path;

use snowflake::{
    Clock, ErrorKind, Generator, GeneratorBuilder, Id, Layout, ManualClock, MarkStore,
};
use snowflake_store::FileMarkStore;

/// The unit tests' helpers, shared; this file needs only some of them.
#[allow(dead_code)]
#[path = "../src/testing.rs"]
mod testing;
use testing::{assert_says, state_file};

/// Where the tests' clocks start.
const START: i64 = 1_700_000_000_000;

/// A builder of `layout`'s generator on `clock`, its mark in the state file
/// at `path`.
fn on_file<'a, C: Clock>(layout: Layout, clock: C, path: &Path) -> GeneratorBuilder<'a, C> {
    Generator::builder(layout)
        .clock(clock)
        .store(FileMarkStore::new(path))
}

#[test]
fn restart_from_the_state_file_never_goes_back() {
    let (_dir, path) = state_file("restart");
    let clock = Arc::new(ManualClock::new(START));
    let build = || {
        on_file(Layout::twitter(), clock.clone(), &path)
            .reserve_ms(1000)
            .build()
    };
    let before = build().unwrap();
    let mut last = Id::new(0);
    for _ in 0..20 {
        for id in before.next_ids(1000).unwrap() {
            last = id;
        }
        clock.advance(7);
    }
    let mark = FileMarkStore::new(&path).load().unwrap().unwrap();
    assert!(mark >= Layout::twitter().decode(last).unwrap().timestamp_ms());
    assert!(before.stats().mark_writes >= 1);
    drop(before);

    // The clock is set back, but by less than the tolerance plus the window
    // the mark reserves: the restarted generator waits past the mark rather
    // than reuse any time.
    clock.set(mark - 900);
    let after = build().unwrap();
    assert!(clock.now_ms() > mark);
    let first = after.next_id().unwrap();
    assert!(first > last, "{first} <= {last}");
    assert!(Layout::twitter().decode(first).unwrap().timestamp_ms() > mark);

    // A clean close shrinks the mark to the last ID issued.
    let closed_at = Layout::twitter().decode(first).unwrap().timestamp_ms();
    after.close().unwrap();
    assert_eq!(FileMarkStore::new(&path).load().unwrap(), Some(closed_at));
    let again = build().unwrap();
    assert!(again.next_id().unwrap() > first);
    drop(again);

    // Set back further than the tolerance and the window: it refuses to start.
    let mark = FileMarkStore::new(&path).load().unwrap().unwrap();
    clock.set(mark - 60_000);
    let err = build().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert_says(&err, "behind the high-water mark");
}

#[test]
fn broken_state_file_is_a_clear_error() {
    let (dir, path) = state_file("broken");
    std::fs::write(&path, "not a number\n").unwrap();
    let err = Generator::builder(Layout::twitter())
        .store(FileMarkStore::new(&path))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert_says(
        &err,
        &format!("cannot use {}: it is not a mark file", path.display()),
    );
    let missing = FileMarkStore::new(dir.join("no/such/dir/mark"));
    assert!(missing.open(&Layout::twitter()).is_err());
}

/// The builder opens the store with its own layout: a state file of another
/// layout, or one that a live generator holds, stops it from being built.
#[test]
fn the_builder_opens_the_store_for_its_layout_and_for_itself_alone() {
    let (_dir, path) = state_file("opened");
    let build = |layout: Layout| on_file(layout, Arc::new(ManualClock::new(START)), &path).build();
    let first = build(Layout::twitter()).unwrap();
    first.next_id().unwrap();
    let err = build(Layout::twitter()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StoreInUse);
    assert_says(&err, &format!("in use by process {}", std::process::id()));
    first.close().unwrap();
    let err = build(Layout::discord()).unwrap_err();
    assert_says(&err, "belongs to layout time:41");
    // Shared through an Arc, the store is still opened for the layout.
    let shared = Arc::new(FileMarkStore::new(&path));
    let again = Generator::builder(Layout::twitter())
        .clock(Arc::new(ManualClock::new(START)))
        .store(shared.clone())
        .build()
        .unwrap();
    again.next_id().unwrap();
    assert!(FileMarkStore::new(&path).open(&Layout::twitter()).is_err());
    drop(again);
    drop(shared);
}

/// The lock file removed under a running generator (a "stale lock" cleared
/// by hand): a second generator can then start on the same state file, and
/// the promise is that the two never both issue. The first issues nothing
/// past the mark it had written, and never writes again; the second starts
/// above that mark.
#[test]
fn a_removed_lock_file_lets_a_second_generator_start_above_the_first_which_stops() {
    let (dir, path) = state_file("taken");
    let layout = Layout::twitter();
    let first_clock = Arc::new(ManualClock::new(START));
    let first = on_file(layout.clone(), first_clock.clone(), &path)
        .reserve_ms(1000)
        .build()
        .unwrap();
    let mut firsts = vec![first.next_id().unwrap()];
    let mark = first.stats().mark_ms.unwrap();
    assert_eq!(mark, START + 1000);

    std::fs::remove_file(dir.join("mark.lock")).unwrap();
    // The second starts at once, its clock behind the first's mark: it
    // waits the mark out, then issues above it.
    let second_clock = Arc::new(ManualClock::new(START + 10));
    let second = on_file(layout.clone(), second_clock.clone(), &path)
        .reserve_ms(1000)
        .build()
        .unwrap();
    assert_eq!(second_clock.now_ms(), mark + 1);
    let seconds: Vec<Id> = (0..100).map(|_| second.next_id().unwrap()).collect();

    // The first goes on within what it had reserved: past half the window
    // its early top-up fails quietly, as any failed top-up does.
    first_clock.set(START + 600);
    firsts.push(first.next_id().unwrap());
    first_clock.set(mark);
    firsts.push(first.next_id().unwrap());
    // Past its mark it would have to write one: refused, and for good.
    for at in [mark + 1, mark + 5_000] {
        first_clock.set(at);
        let err = first.next_id().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        // The second made a lock file of its own at the path.
        assert_says(&err, "mark.lock was replaced by another file");
        assert!(first.next_ids(10).is_err());
    }
    assert_eq!(first.stats().issued, firsts.len() as u64);
    assert_eq!(first.stats().mark_ms, Some(mark));
    // Every ID of the first lies below every ID of the second.
    assert!(firsts.iter().max() < seconds.iter().min());
    // A clean close of the first would lower the mark: refused too, so the
    // second's mark stays.
    let seconds_mark = second.stats().mark_ms.unwrap();
    assert!(first.close().is_err());
    assert_eq!(
        FileMarkStore::new(&path).load().unwrap(),
        Some(seconds_mark)
    );
    drop(second);
}

/// A clock whose wait also runs `during`: another writer acts while the
/// builder waits out the stored mark.
struct Meddling<F: Fn() + Send + Sync> {
    clock: ManualClock,
    during: F,
}

impl<F: Fn() + Send + Sync> Clock for Meddling<F> {
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        (self.during)();
        self.clock.wait_toward(target_ms);
    }
}

/// The state file written by another process while a generator starting on
/// it waits for its mark to pass (as when two hosts share a file system
/// whose locks do not reach across): the starting generator refuses, before
/// it has issued anything.
#[test]
fn a_generator_whose_mark_moves_while_it_waits_refuses_to_start() {
    let (dir, path) = state_file("moved");
    let layout = Layout::twitter();
    // The files the other process writes: a mark of a second, then later.
    let other = dir.join("other");
    let store = FileMarkStore::new(&other);
    store.open(&layout).unwrap();
    store.save(START + 1000).unwrap();
    let earlier = std::fs::read_to_string(&other).unwrap();
    store.save(START + 1500).unwrap();
    let later = std::fs::read_to_string(&other).unwrap();
    drop(store);

    std::fs::write(&path, &earlier).unwrap();
    let clock = Meddling {
        clock: ManualClock::new(START),
        during: || std::fs::write(&path, &later).unwrap(),
    };
    let err = on_file(layout.clone(), clock, &path).build().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StoreInUse);
    assert_says(
        &err,
        "another process changed it since this one last read or wrote it",
    );
    // Without the other writer, the same start succeeds.
    std::fs::write(&path, &earlier).unwrap();
    let quiet = Meddling {
        clock: ManualClock::new(START),
        during: || (),
    };
    let generator = on_file(layout, quiet, &path).build().unwrap();
    assert!(generator.next_id().is_ok());
    drop(generator);
}

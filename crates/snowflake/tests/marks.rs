//! The high-water mark, with a store in memory: written before any ID of
//! its window, topped up at half the window, waited out after a restart.

use std::sync::Arc;

use snowflake::{Clock, ErrorKind, Generator, Id, Layout, ManualClock};

use crate::support::{MemStore, next_time, on_manual_clock};

/// A restart whose clock is behind the stored mark: the allowance (tolerance
/// plus reserve window) and the size in the error are milliseconds.
#[test]
fn restart_behind_the_mark_is_measured_in_milliseconds() {
    let start = 1_700_000_000_000;
    // The mark is the last millisecond of the unit that starts at start + 30.
    let store = MemStore::with_mark(start + 39);
    let build = |now: i64| {
        let (builder, clock) = on_manual_clock(Layout::sonyflake(), now);
        let built = builder
            .tolerance_ms(5)
            .reserve_ms(20)
            .store(store.clone())
            .build();
        (built, clock)
    };
    // 27 ms behind the mark's unit; 5 + 20 ms are allowed.
    let err = build(start + 3).0.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(
        err.to_string()
            .contains("is 27 ms behind the high-water mark"),
        "{err}"
    );
    assert!(
        err.to_string().contains("more than the 25 ms tolerated"),
        "{err}"
    );
    // 25 ms behind: it waits, and starts after the mark's unit.
    let (generator, clock) = build(start + 5);
    let generator = generator.unwrap();
    assert_eq!(clock.now_ms(), start + 40);
    assert_eq!(next_time(&generator), start + 40);
}

/// After a restart every sequence number of the mark's unit counts as
/// issued, on a layout whose sequence sits above the node field (sonyflake)
/// as on one where it is the lowest: a clock set back into that unit gets
/// no ID of it, only one of the next unit.
#[test]
fn the_marks_unit_is_used_up_after_a_restart_whatever_the_sequences_place() {
    let layout = Layout::sonyflake();
    let mark = 1_700_000_000_005;
    let mark_unit_start = layout.timestamp_ms(layout.time_units(mark).unwrap());
    let (builder, clock) = on_manual_clock(layout.clone(), mark + 20);
    let generator = builder.store(MemStore::with_mark(mark)).build().unwrap();
    clock.set(mark_unit_start);
    let time = next_time(&generator);
    assert!(
        time > mark,
        "an ID at {time} ms, in the unit of the mark ({mark} ms) issued before the restart"
    );
}

/// Twitter's generator on a manual clock at `start`, reserving 10 ms windows
/// in a store in memory, after its first ID, which wrote the first mark
/// (checked): the generator, its clock and store, and that ID.
fn first_id_marked(start: i64) -> (Generator<Arc<ManualClock>>, Arc<ManualClock>, MemStore, Id) {
    let store = MemStore::default();
    let (builder, clock) = on_manual_clock(Layout::twitter(), start);
    let generator = builder.reserve_ms(10).store(store.clone()).build().unwrap();
    let first = generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 10));
    (generator, clock, store, first)
}

/// The mark is written before any ID in its window is issued: when it cannot
/// be written, `next_id` fails and issues nothing; within a mark already
/// written, a failed early top-up is no error.
#[test]
fn a_failing_mark_store_stops_issuing_and_issues_nothing() {
    let start = 1_700_000_000_000;
    let (generator, clock, store, first) = first_id_marked(start);
    store.fail(true);
    // Within the written mark, past half the window: the top-up fails quietly.
    clock.set(start + 8);
    let covered = generator.next_id().unwrap();
    assert!(covered > first);
    assert_eq!(store.mark(), Some(start + 10));
    // Past the mark, nothing may be issued until it is written.
    clock.set(start + 11);
    let issued = generator.stats().issued;
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(err.to_string().contains("the disk is full"), "{err}");
    assert!(generator.next_ids(100).is_err());
    assert_eq!(generator.stats().issued, issued, "nothing issued");
    assert_eq!(generator.stats().mark_ms, Some(start + 10));
    store.fail(false);
    let next = generator.next_id().unwrap();
    assert!(next > covered);
    assert_eq!(generator.stats().issued, issued + 1);
    let time = Layout::twitter().decode(next).unwrap().timestamp_ms();
    assert_eq!(time, start + 11);
    assert!(store.mark().unwrap() >= time, "the mark covers the ID");
    assert_eq!(generator.stats().mark_writes, 2);
}

/// The mark is topped up early, once half its window is used, so callers
/// rarely wait on the store; before that, nothing is written.
#[test]
fn the_mark_is_topped_up_at_half_the_window() {
    let start = 1_700_000_000_000;
    let (generator, clock, store, _) = first_id_marked(start);
    // Less than half the window used: no write.
    clock.set(start + 5);
    generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 10));
    assert_eq!(generator.stats().mark_writes, 1);
    // More than half: topped up a window past the unit in use.
    clock.set(start + 6);
    generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 16));
    assert_eq!(generator.stats().mark_writes, 2);
    assert_eq!(generator.stats().mark_ms, Some(start + 16));
    // A clean close lowers the mark to the last unit issued.
    generator.close().unwrap();
    assert_eq!(store.mark(), Some(start + 6));
}

/// A mark that no run of this layout could have written is refused, with
/// the file's value and the layout's range, never read as a fresh start.
#[test]
fn a_mark_outside_the_layout_is_refused() {
    let layout = Layout::parse("time:20,node:31,sequence:12").unwrap();
    let clock = Arc::new(ManualClock::new(1_000));
    for mark in [-1, layout.last_timestamp_ms() + 1] {
        let err = Generator::builder(layout.clone())
            .clock(clock.clone())
            .store(MemStore::with_mark(mark))
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        let text = err.to_string();
        assert!(
            text.contains(&format!("the stored mark {mark} (")),
            "{text}"
        );
        assert!(text.contains("is outside layout time:20,node:31,sequence:12's time range, 1970-01-01T00:00:00.000Z to"), "{text}");
    }
}

/// After a restart the clock is set back: IDs continue above the mark, never
/// at or below it, although the clock reads a time below it.
#[test]
fn after_a_restart_a_clock_set_back_stays_above_the_mark() {
    let start = 1_700_000_000_000;
    let mark = start + 1_000;
    let (builder, clock) = on_manual_clock(Layout::twitter(), mark - 3);
    let generator = builder.store(MemStore::with_mark(mark)).build().unwrap();
    // It waited until past the mark.
    assert_eq!(clock.now_ms(), mark + 1);
    clock.set(mark - 4);
    let time = next_time(&generator);
    assert!(time > mark, "issued at {time}, the mark is {mark}");
    assert_eq!(generator.stats().issued, 1);
}

/// A store shared in an `Arc` (as a service shares it with its metrics) is
/// the same store: its mark is read at start and written as IDs are issued.
#[test]
fn a_store_in_an_arc_is_read_and_written_through() {
    let start = 1_700_000_000_000;
    let mark = start + 1_000;
    let store = MemStore::with_mark(mark);
    let (builder, clock) = on_manual_clock(Layout::twitter(), mark - 3);
    let generator = builder
        .reserve_ms(10)
        .store(Arc::new(store.clone()))
        .build()
        .unwrap();
    // Read through the Arc: the start waited until past the mark.
    assert_eq!(clock.now_ms(), mark + 1);
    assert_eq!(next_time(&generator), mark + 1);
    // Written through the Arc.
    assert_eq!(store.mark(), Some(mark + 11));
}

/// A restart with the clock inside the mark's own unit still waits for the
/// next one.
#[test]
fn a_restart_in_the_marks_unit_waits_for_the_next() {
    let mark = 1_700_000_000_000;
    let (builder, clock) = on_manual_clock(Layout::twitter(), mark);
    let generator = builder.store(MemStore::with_mark(mark)).build().unwrap();
    assert_eq!(clock.now_ms(), mark + 1);
    assert_eq!(next_time(&generator), mark + 1);
}

/// On a 10 ms tick the stored mark is the last millisecond of the reserved
/// unit, so that a restart at any millisecond of that unit waits it out.
#[test]
fn the_mark_is_the_last_millisecond_of_its_unit() {
    let start = 1_700_000_000_000;
    let store = MemStore::default();
    let (builder, _) = on_manual_clock(Layout::sonyflake(), start + 3);
    let generator = builder.reserve_ms(20).store(store.clone()).build().unwrap();
    generator.next_id().unwrap();
    // Two units of 10 ms past the unit in use, to its last millisecond.
    assert_eq!(store.mark(), Some(start + 29));
    assert_eq!(generator.stats().mark_ms, Some(start + 29));
}

/// Generators that issue from one shared state, as a database's processes
/// do: `resume` puts the state above the mark read back after a restart,
/// refuses a mark further ahead than the tolerance and the window as
/// `build` does, and every generator over the state then issues above it,
/// asking the shared mark to cover each new time unit first.
#[test]
fn shared_state_resumes_above_the_mark_for_every_generator() {
    use snowflake::{Error, SharedMark, SharedState};
    use std::sync::Mutex;

    #[derive(Default)]
    struct Asked(Mutex<Vec<i64>>);
    impl SharedMark for Asked {
        fn cover(&self, mark_ms: i64) -> Result<(), Error> {
            self.0.lock().unwrap().push(mark_ms);
            Ok(())
        }
    }

    let start = 1_700_000_000_000;
    let layout = Layout::sonyflake(); // 10 ms ticks
    let clock = Arc::new(ManualClock::new(start));
    let builder = || {
        Generator::builder(layout.clone())
            .node(&[("machine", 3)])
            .clock(clock.clone())
            .tolerance_ms(5)
            .reserve_ms(20)
    };
    let shared = SharedState::new();
    let err = builder().resume(&shared, Some(start + 40)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store, "{err}");

    // The mark's unit starts at start + 10: waited out, as build does.
    let first = builder().resume(&shared, Some(start + 15)).unwrap();
    assert!(clock.now_ms() >= start + 20);
    let asked = Asked::default();
    let other = builder().build().unwrap();
    let a = first.next_id_on(&shared, &asked).unwrap();
    let b = other.next_id_on(&shared, &asked).unwrap();
    assert!(b > a);
    for id in [a, b] {
        let decoded = layout.decode(id).unwrap();
        assert!(
            decoded.timestamp_ms() > start + 15,
            "{id:?} at or below the mark"
        );
        assert_eq!(decoded.field("machine"), Some(3));
    }
    // One time unit opened, covered once: its last millisecond.
    let unit_end = layout.decode(a).unwrap().timestamp_ms() + 9;
    assert_eq!(*asked.0.lock().unwrap(), [unit_end]);
}

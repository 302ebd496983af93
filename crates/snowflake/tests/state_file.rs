//! The file-backed mark store under a generator: restarts from the state
//! file, files that are refused, and one generator per file at a time.

use std::sync::Arc;

use snowflake::{Clock, ErrorKind, FileMarkStore, Generator, Id, Layout, ManualClock, MarkStore};

use crate::support::temp_dir;

#[test]
fn restart_from_the_state_file_never_goes_back() {
    let dir = temp_dir("restart");
    let path = dir.join("mark");
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let build = || {
        Generator::builder(Layout::twitter())
            .clock(clock.clone())
            .store(FileMarkStore::new(&path))
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
    assert!(
        err.to_string().contains("behind the high-water mark"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn broken_state_file_is_a_clear_error() {
    let dir = temp_dir("broken");
    let path = dir.join("mark");
    std::fs::write(&path, "not a number\n").unwrap();
    let err = Generator::builder(Layout::twitter())
        .store(FileMarkStore::new(&path))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(
        err.to_string().contains(&format!(
            "cannot use {}: it is not a mark file",
            path.display()
        )),
        "{err}"
    );
    let missing = FileMarkStore::new(dir.join("no/such/dir/mark"));
    assert!(missing.open(&Layout::twitter()).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The builder opens the store with its own layout: a state file of another
/// layout, or one that a live generator holds, stops it from being built.
#[test]
fn the_builder_opens_the_store_for_its_layout_and_for_itself_alone() {
    let dir = temp_dir("opened");
    let path = dir.join("mark");
    let build = |layout: Layout| {
        Generator::builder(layout)
            .clock(Arc::new(ManualClock::new(1_700_000_000_000)))
            .store(FileMarkStore::new(&path))
            .build()
    };
    let first = build(Layout::twitter()).unwrap();
    first.next_id().unwrap();
    let err = build(Layout::twitter()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StoreInUse);
    assert!(
        err.to_string()
            .contains(&format!("in use by process {}", std::process::id())),
        "{err}"
    );
    first.close().unwrap();
    let err = build(Layout::discord()).unwrap_err();
    assert!(
        err.to_string().contains("belongs to layout time:41"),
        "{err}"
    );
    // Shared through an Arc, the store is still opened for the layout.
    let shared = Arc::new(FileMarkStore::new(&path));
    let again = Generator::builder(Layout::twitter())
        .clock(Arc::new(ManualClock::new(1_700_000_000_000)))
        .store(shared.clone())
        .build()
        .unwrap();
    again.next_id().unwrap();
    assert!(FileMarkStore::new(&path).open(&Layout::twitter()).is_err());
    drop(again);
    drop(shared);
    std::fs::remove_dir_all(&dir).unwrap();
}

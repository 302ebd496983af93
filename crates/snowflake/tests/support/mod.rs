//! What the rooms of the test binary share: a generator on a manual clock,
//! the time of its next ID, a mark store in memory, and Twitter's epoch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use snowflake::{Clock, Error, Generator, GeneratorBuilder, Layout, ManualClock, MarkStore};

/// Twitter's epoch, the default layout's.
pub const EPOCH: i64 = 1288834974657;

/// A builder of `layout`'s generator on a manual clock that reads `now_ms`,
/// and that clock, for the test to move.
pub fn on_manual_clock<'a>(
    layout: Layout,
    now_ms: i64,
) -> (GeneratorBuilder<'a, Arc<ManualClock>>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(now_ms));
    (Generator::builder(layout).clock(clock.clone()), clock)
}

/// The Unix millisecond of the next ID `generator` issues, read under its
/// layout.
pub fn next_time<C: Clock>(generator: &Generator<C>) -> i64 {
    let id = generator.next_id().unwrap();
    generator.layout().decode(id).unwrap().timestamp_ms()
}

/// A mark store in memory that can be told to fail; clones share the mark.
#[derive(Clone, Default)]
pub struct MemStore(Arc<MemState>);

#[derive(Default)]
pub struct MemState {
    mark: Mutex<Option<i64>>,
    failing: AtomicBool,
}

impl MemStore {
    pub fn with_mark(mark_ms: i64) -> Self {
        let store = MemStore::default();
        *store.0.mark.lock().unwrap() = Some(mark_ms);
        store
    }

    pub fn mark(&self) -> Option<i64> {
        *self.0.mark.lock().unwrap()
    }

    /// From now on every save fails as a full disk would, or none does.
    pub fn fail(&self, failing: bool) {
        self.0.failing.store(failing, Ordering::SeqCst);
    }
}

impl MarkStore for MemStore {
    fn load(&self) -> Result<Option<i64>, Error> {
        Ok(self.mark())
    }

    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        if self.0.failing.load(Ordering::SeqCst) {
            return Err(Error::store_failure("the disk is full"));
        }
        *self.0.mark.lock().unwrap() = Some(mark_ms);
        Ok(())
    }
}

//! The high-water mark that makes a restart safe.
//!
//! Invariant: the mark is written before any ID in its window is issued, so
//! whatever the store holds after a crash is at or above every ID issued. The
//! mark runs a window ahead of use and is topped up when half the window is
//! used, so callers rarely wait on the store.

use alloc::boxed::Box;

use crate::error::Error;
use crate::layout::Layout;
use crate::store::MarkStore;
use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering, TryLockError};
use crate::time::UnixMillis;

/// The last millisecond of a time unit: the mark that covers the unit.
pub(crate) fn unit_end_ms(layout: &Layout, unit: u64) -> i64 {
    layout.timestamp_ms(unit) + (layout.tick_ms() - 1) as i64
}

pub(crate) struct Reserve {
    store: Box<dyn MarkStore>,
    /// The highest unit already durable in the store, inclusive.
    reserved: AtomicU64,
    window_units: u64,
    layout: Layout,
    /// Marks written to the store.
    writes: AtomicU64,
    lock: Mutex<()>,
}

/// The time unit of the mark in `store`: 0 when there is none. A mark before
/// the layout's epoch or past its end cannot have come from this layout, so
/// it is refused rather than read as "nothing issued" or "time ran out".
pub(crate) fn stored_unit(store: &dyn MarkStore, layout: &Layout) -> Result<u64, Error> {
    let Some(mark_ms) = store.load()? else {
        return Ok(0);
    };
    layout.time_units(mark_ms).map_err(|_| {
        Error::store(alloc::format!(
            "the stored mark {mark_ms} ({}) is outside layout {}'s time range, {} to {}; \
             it belongs to another layout or is damaged",
            UnixMillis(mark_ms),
            layout.name(),
            UnixMillis(layout.epoch_ms()),
            UnixMillis(layout.last_timestamp_ms()),
        ))
    })
}

impl Reserve {
    /// A reserve whose store already covers everything up to `mark_unit`.
    pub(crate) fn new(
        store: Box<dyn MarkStore>,
        layout: &Layout,
        mark_unit: u64,
        window_units: u64,
    ) -> Self {
        Reserve {
            store,
            reserved: AtomicU64::new(mark_unit),
            window_units,
            layout: layout.clone(),
            writes: AtomicU64::new(0),
            lock: Mutex::new(()),
        }
    }

    /// The mark stored for a reserved unit: the last millisecond of that unit.
    pub(crate) fn mark_ms_of(&self, unit: u64) -> i64 {
        unit_end_ms(&self.layout, unit)
    }

    /// The highest time durable in the store, Unix milliseconds.
    pub(crate) fn mark_ms(&self) -> i64 {
        self.mark_ms_of(self.reserved.load(Ordering::Relaxed))
    }

    /// How many marks have been written.
    pub(crate) fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// Lowers the stored mark to `last_unit`, the last unit actually used,
    /// when nothing more will be issued.
    pub(crate) fn release(&self, last_unit: u64) -> Result<(), Error> {
        self.store.save(self.mark_ms_of(last_unit))
    }

    /// Makes sure `unit` is covered by a durable mark before any ID in it is
    /// published. Tops the mark up early, when half the window is used, by
    /// whichever thread gets the lock first, so callers rarely wait on disk.
    pub(crate) fn ensure(&self, unit: u64) -> Result<(), Error> {
        let reserved = self.reserved.load(Ordering::Acquire);
        if unit <= reserved {
            if unit + self.window_units / 2 > reserved
                && let Ok(_guard) = self.lock.try_lock()
            {
                // Still within the mark: a failed early top-up is retried
                // by the next caller, and is an error only once needed.
                let _ = self.extend(unit);
            }
            return Ok(());
        }
        let _guard = self.lock_for(unit)?;
        if unit <= self.reserved.load(Ordering::Acquire) {
            return Ok(());
        }
        self.extend(unit)
    }

    /// The lock, for a caller that needs `unit` covered. While another
    /// thread holds it (writing the mark), the wait goes through the store's
    /// [`MarkStore::wait_for_writer`], never blocking here: a host may have
    /// to let something go that the writer needs back to finish.
    fn lock_for(&self, unit: u64) -> Result<MutexGuard<'_, ()>, Error> {
        loop {
            match self.lock.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::WouldBlock) => self.store.wait_for_writer(&|| {
                    // Until the writer is done: its mark may cover `unit`
                    // already, which the caller looks at once it has the lock.
                    if unit > self.reserved.load(Ordering::Acquire) {
                        drop(self.lock.lock());
                    }
                }),
                Err(TryLockError::Poisoned(_)) => {
                    return Err(Error::store("the mark lock was poisoned by a panic"));
                }
            }
        }
    }

    fn extend(&self, unit: u64) -> Result<(), Error> {
        let target = unit
            .saturating_add(self.window_units)
            .min(self.layout.max_time_units());
        if target <= self.reserved.load(Ordering::Acquire) {
            return Ok(());
        }
        self.store.save(self.mark_ms_of(target))?;
        self.reserved.fetch_max(target, Ordering::Release);
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

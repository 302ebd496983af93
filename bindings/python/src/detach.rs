//! The GIL let go while the core waits: for the next time unit when a
//! sequence is used up, for a clock that stepped back a little, for the
//! state file's write and fsync.
//!
//! # Design
//!
//! The core waits deep inside a call (its generator's `advance`, its
//! mark store's `save`), through the [`Clock`] and [`MarkStore`] it was
//! given. So the generator gets a clock and a store that let the GIL go
//! around exactly those waits, and nothing else changes: the common case,
//! an ID from the current time unit, runs with the GIL held, as releasing
//! it costs more than the ID.
//!
//! The GIL may be let go only by a thread that holds it through a call of
//! this package, never by one of the cluster node's own threads, which
//! wait on the same clock without it. A call marks its thread for its
//! duration ([`issuing`], which takes a `Python` token as proof); the
//! waits look at that mark.

use std::cell::Cell;

use pyo3::prelude::*;
use snowflake::{Clock, Error, Layout, MarkStore};

thread_local! {
    /// Whether this thread is inside a call of this package and holds the
    /// GIL for it.
    static ISSUING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a call into the core, with this thread marked as one whose
/// waits may let the GIL go.
pub(crate) fn issuing<T>(_attached: Python<'_>, f: impl FnOnce() -> T) -> T {
    struct Unmark(bool);
    impl Drop for Unmark {
        fn drop(&mut self) {
            ISSUING.with(|issuing| issuing.set(self.0));
        }
    }
    let _unmark = Unmark(ISSUING.with(|issuing| issuing.replace(true)));
    f()
}

/// Runs `f`, which waits and touches no Python object, without the GIL if
/// this thread holds it through [`issuing`].
fn unattached<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if ISSUING.with(Cell::get) {
        Python::attach(|py| py.detach(f))
    } else {
        f()
    }
}

/// A clock whose waits, or a mark store whose reads and writes (an fsync
/// each), let the GIL go.
#[derive(Debug)]
pub(crate) struct Releasing<T>(pub(crate) T);

impl<C: Clock> Clock for Releasing<C> {
    #[inline]
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        unattached(|| self.0.wait_toward(target_ms));
    }
}

impl<S: MarkStore> MarkStore for Releasing<S> {
    fn open(&self, layout: &Layout) -> Result<(), Error> {
        unattached(|| self.0.open(layout))
    }

    fn confirm(&self) -> Result<(), Error> {
        unattached(|| self.0.confirm())
    }

    fn load(&self) -> Result<Option<i64>, Error> {
        unattached(|| self.0.load())
    }

    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        unattached(|| self.0.save(mark_ms))
    }
}

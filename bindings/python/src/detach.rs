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
//! wait on the same clock without it. A cluster node's call marks its
//! thread for its duration ([`issuing`], which takes a `Python` token as
//! proof), and its waits look at that mark. A `Generator`'s clock and store
//! are used by Python's threads alone, so their waits need no mark: they
//! always let the GIL go, taking it first where the thread had let it go
//! already (`close`), and the one-ID call sets nothing (a thread-local of a
//! shared library is reached through a call, a cost on every ID). They
//! count the threads away, for `close` (the `held` module).

use std::cell::Cell;
use std::sync::Arc;

use pyo3::prelude::*;
use snowflake::{Clock, Error, Layout, MarkStore};

use crate::held::Away;

thread_local! {
    /// Whether this thread is inside a call of this package and holds the
    /// GIL for it.
    static ISSUING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a call into the core, with this thread marked as one whose
/// waits may let the GIL go.
#[cfg(feature = "cluster")]
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

/// Runs `f`, which waits and touches no Python object, without the GIL:
/// always for a wrapper used by Python's threads alone, else if this
/// thread holds the GIL through [`issuing`].
fn unattached<T: Send>(away: Option<&Away>, f: impl FnOnce() -> T + Send) -> T {
    match away {
        Some(away) => Python::attach(|py| away.detached(py, f)),
        None if ISSUING.with(Cell::get) => Python::attach(|py| py.detach(f)),
        None => f(),
    }
}

/// A clock whose waits, or a mark store whose reads and writes (an fsync
/// each), let the GIL go.
#[derive(Debug)]
pub(crate) struct Releasing<T> {
    inner: T,
    /// For a `Generator`'s: where its threads are counted while away.
    away: Option<Arc<Away>>,
}

impl<T> Releasing<T> {
    /// For a cluster node, whose own threads use it too: its waits let the
    /// GIL go only on a thread that [`issuing`] marked.
    #[cfg(feature = "cluster")]
    pub(crate) fn on_marked_threads(inner: T) -> Self {
        Releasing { inner, away: None }
    }

    /// For a `Generator`, which only Python's threads call: its waits
    /// always let the GIL go, counted in `away` (see [`Held`](crate::held)),
    /// and calls need no mark.
    pub(crate) fn on_python_threads(inner: T, away: &Arc<Away>) -> Self {
        Releasing {
            inner,
            away: Some(Arc::clone(away)),
        }
    }

    fn unattached<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        unattached(self.away.as_deref(), f)
    }
}

impl<C: Clock> Clock for Releasing<C> {
    #[inline]
    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        self.unattached(|| self.inner.wait_toward(target_ms));
    }
}

impl<S: MarkStore> MarkStore for Releasing<S> {
    fn open(&self, layout: &Layout) -> Result<(), Error> {
        self.unattached(|| self.inner.open(layout))
    }

    fn confirm(&self) -> Result<(), Error> {
        self.unattached(|| self.inner.confirm())
    }

    fn load(&self) -> Result<Option<i64>, Error> {
        self.unattached(|| self.inner.load())
    }

    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        self.unattached(|| self.inner.save(mark_ms))
    }

    /// The writer this thread waits for may have let the GIL go around its
    /// `save` and need it back to finish: held through the wait, it would
    /// never get it.
    fn wait_for_writer(&self, wait: &(dyn Fn() + Sync)) {
        self.unattached(wait)
    }
}

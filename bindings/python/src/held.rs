//! `Held`: a `Generator`'s issuer, reached by every call without a lock,
//! and taken by `close` only when no call is inside it.
//!
//! # Design
//!
//! A lock around the issuer (a read lock per call, the write lock for
//! `close`) costs two atomic read-modify-writes on every ID (BENCHMARKS.md,
//! section 14, says how much). The GIL already orders the calls: a call
//! holds it from its look at `closed` until it is done with the issuer,
//! and lets it go only where the core waits, through the
//! [`Releasing`](crate::detach::Releasing) clock and store, which count the
//! threads away in [`Away`]. So `close`,
//! holding the GIL, sees every other call either outside the issuer or
//! counted away; it marks the issuer closed, lets the GIL go until no
//! thread is away, and takes the issuer with the GIL held: no call can be
//! inside it then. It closes the issuer before it lets a second `close`
//! in, so that a second `close` returns only once the first is done.
//!
//! A copy of the issuer in a child process of `fork()` is reached by no
//! call (`get` refuses a copy), and the threads counted away or closing at
//! the fork are the parent's: the child has none of them, and waiting for
//! them would be forever. So a copy is taken at once.
//!
//! What a call must not do between [`Held::get`] and its last use of the
//! issuer: run Python code or make a Python object (either can run a
//! finalizer that closes, or let the GIL go at a bytecode boundary), or
//! let the GIL go other than through `Releasing`. `next_id` and `next_ids`
//! keep to that: the IDs become Python objects after the issuer is done
//! with, and a batch's check for Ctrl-C comes between two uses of `get`.
//!
//! Nor may anything in this package drop a Python object without the GIL.
//! PyO3 keeps such a drop for later and carries it out, finalizer and all,
//! the next time a thread attaches or comes back from `detach`, and
//! `Releasing` does both inside the issuer: the finalizer would run there,
//! and a `close` in it would take the issuer from under the call. Nothing
//! does today: every wait without the GIL (`Releasing`'s, the constructor's,
//! `close`'s) handles Rust values alone.
//!
//! The GIL is always there: the module is built for the limited API
//! (abi3), which CPython's free-threaded builds do not load, and declares
//! that it uses the GIL.

// The one module of this package with `unsafe`: the issuer's cell.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use pyo3::prelude::*;

use crate::fork::Lineage;

/// How many threads are inside a call to one issuer with the GIL let go.
#[derive(Debug, Default)]
pub(crate) struct Away(AtomicUsize);

impl Away {
    /// Runs `f` without the GIL, counted away for its duration: counted
    /// before the GIL is let go and uncounted after it is taken back.
    pub(crate) fn detached<T: Send>(&self, py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
        struct Back<'a>(&'a AtomicUsize);
        impl Drop for Back<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.0.fetch_add(1, Ordering::SeqCst);
        let _back = Back(&self.0);
        py.detach(f)
    }

    fn anyone(&self) -> bool {
        self.0.load(Ordering::SeqCst) != 0
    }
}

/// An issuer that calls reach without a lock while it is open (see the
/// module's design).
#[derive(Debug)]
pub(crate) struct Held<T> {
    issuer: UnsafeCell<Option<T>>,
    /// The calls inside the issuer that let the GIL go while it waits: the
    /// count its `Releasing` clock and store keep.
    away: Arc<Away>,
    closed: AtomicBool,
    /// Taken by `close` until the issuer is closed, so that a second
    /// `close` returns only when the first is done.
    closing: Mutex<()>,
    /// The process it was made in: a copy in a child of `fork()` is
    /// reached by no call.
    lineage: Lineage,
}

/// Why [`Held::get`] gives no issuer.
#[derive(Debug)]
pub(crate) enum Refused {
    /// This is a copy in a child process of `fork()`.
    Copy,
    /// Closing began.
    Closed,
}

// SAFETY: the issuer is shared between threads only as `&T` (`get`), which
// `T: Sync` allows, and mutated only by `take`, when no thread can hold a
// `&T` from `get` (see the module's design).
unsafe impl<T: Send + Sync> Sync for Held<T> {}

impl<T> Held<T> {
    /// `issuer` counts its calls away in `away`.
    pub(crate) fn new(issuer: T, away: Arc<Away>) -> Held<T> {
        Held {
            issuer: UnsafeCell::new(Some(issuer)),
            away,
            closed: AtomicBool::new(false),
            closing: Mutex::new(()),
            lineage: Lineage::here(),
        }
    }

    /// The process it was made in.
    pub(crate) fn lineage(&self) -> &Lineage {
        &self.lineage
    }

    /// The issuer, for one call holding the GIL; refused in a child process
    /// of `fork()` and once closing began.
    #[inline]
    pub(crate) fn get<'py>(&'py self, _attached: Python<'py>) -> Result<&'py T, Refused> {
        if self.lineage.is_copy() {
            return Err(Refused::Copy);
        }
        if self.closed.load(Ordering::SeqCst) {
            return Err(Refused::Closed);
        }
        // SAFETY: not closed, and the GIL is held: `close`, which needs the
        // GIL, cannot mutate the issuer until this call lets the GIL go
        // through `Away` (counted) or is done with the reference.
        unsafe { (*self.issuer.get()).as_ref() }.ok_or(Refused::Closed)
    }

    /// Whether closing began.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Refuses every call from now on, waits (without the GIL) until no
    /// call is away inside the issuer, and hands it to `close` (None if it
    /// was taken before); a second `close` waits until the first returns.
    /// A copy in a child process of `fork()` is dropped at once instead,
    /// and `close` gets None: the issuer is the parent's to close.
    pub(crate) fn close<R>(&self, py: Python<'_>, close: impl FnOnce(Option<T>) -> R) -> R {
        if self.lineage.is_copy() {
            self.closed.store(true, Ordering::SeqCst);
            // SAFETY: `get` refuses every call in this process, so no
            // thread of it holds a reference; the threads away or closing
            // at the fork are the parent's, not in this process. The GIL,
            // held, orders two threads closing the copy.
            drop(unsafe { (*self.issuer.get()).take() });
            return close(None);
        }
        let _closing = loop {
            match self.closing.try_lock() {
                Ok(closing) => break closing,
                Err(TryLockError::Poisoned(poisoned)) => break poisoned.into_inner(),
                // The other `close` needs the GIL to finish.
                Err(TryLockError::WouldBlock) => nap(py),
            }
        };
        self.closed.store(true, Ordering::SeqCst);
        while self.away.anyone() {
            nap(py);
        }
        // SAFETY: closed, so no call gets a new reference; none is away,
        // and this thread holds the GIL, so none is inside the issuer.
        let taken = unsafe { (*self.issuer.get()).take() };
        close(taken)
    }
}

/// A short wait without the GIL, for `close` to let other calls finish.
fn nap(py: Python<'_>) {
    py.detach(|| std::thread::sleep(Duration::from_micros(50)));
}

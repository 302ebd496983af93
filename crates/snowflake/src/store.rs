//! Where a generator keeps its high-water mark across restarts: what a
//! store must do. The stores themselves do I/O and live elsewhere: the
//! `snowflake-store` crate's file, the cluster mode's etcd.

use crate::error::Error;
use crate::layout::Layout;

/// Durable storage for a generator's high-water mark: the highest Unix
/// millisecond it may issue IDs up to.
///
/// The generator writes a mark *before* it issues any ID in the window the
/// mark covers, so after a crash or restart every ID issued before lies at or
/// below the stored mark. A store must not return from [`MarkStore::save`]
/// until the mark is durable. The `snowflake-store` crate keeps it in a
/// file (`FileMarkStore`); the cluster mode keeps it in etcd.
///
/// The generator's builder calls [`MarkStore::open`] once, with its layout,
/// before the first [`MarkStore::load`]; a store that must know the layout or
/// claim its storage for one process does so there.
///
/// ```
/// use std::sync::Mutex;
/// use snowflake::{Error, Generator, Layout, MarkStore};
///
/// /// A mark kept in memory: it survives nothing, which suits a test.
/// #[derive(Default)]
/// struct InMemory(Mutex<Option<i64>>);
/// impl MarkStore for InMemory {
///     fn load(&self) -> Result<Option<i64>, Error> {
///         Ok(*self.0.lock().unwrap())
///     }
///     fn save(&self, mark_ms: i64) -> Result<(), Error> {
///         *self.0.lock().unwrap() = Some(mark_ms);
///         Ok(())
///     }
/// }
///
/// let store = std::sync::Arc::new(InMemory::default());
/// let generator = Generator::builder(Layout::twitter()).store(store.clone()).build()?;
/// let id = generator.next_id()?;
/// // The mark was written before the ID was issued, and covers it.
/// let mark = store.load()?.unwrap();
/// assert!(mark >= Layout::twitter().decode(id)?.timestamp_ms());
/// # Ok::<(), snowflake::Error>(())
/// ```
pub trait MarkStore: Send + Sync {
    /// Prepares the store for a generator of `layout`: called once by
    /// [`GeneratorBuilder::build`](crate::GeneratorBuilder::build) before the
    /// first load. A store can check here that its mark belongs to the layout
    /// and take whatever lock makes it the storage's only user. By default it
    /// does nothing.
    ///
    /// ```
    /// use snowflake::{Error, Layout, MarkStore};
    ///
    /// struct Fixed(i64);
    /// impl MarkStore for Fixed {
    ///     fn load(&self) -> Result<Option<i64>, Error> { Ok(Some(self.0)) }
    ///     fn save(&self, _mark_ms: i64) -> Result<(), Error> { Ok(()) }
    /// }
    /// Fixed(0).open(&Layout::twitter())?;
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    fn open(&self, layout: &Layout) -> Result<(), Error> {
        let _ = layout;
        Ok(())
    }
    /// Called by [`GeneratorBuilder::build`](crate::GeneratorBuilder::build)
    /// after it has read the mark and waited until the clock is past it, just
    /// before the generator can issue: a store that can tell that another
    /// writer moved the mark meanwhile refuses here, so that a second process
    /// on the same storage fails at its start rather than at its first ID. By
    /// default it does nothing.
    ///
    /// ```
    /// use snowflake::{Error, MarkStore};
    ///
    /// struct Fixed(i64);
    /// impl MarkStore for Fixed {
    ///     fn load(&self) -> Result<Option<i64>, Error> { Ok(Some(self.0)) }
    ///     fn save(&self, _mark_ms: i64) -> Result<(), Error> { Ok(()) }
    /// }
    /// Fixed(0).confirm()?;
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    fn confirm(&self) -> Result<(), Error> {
        Ok(())
    }
    /// The stored mark, or `None` when nothing was stored yet.
    fn load(&self) -> Result<Option<i64>, Error>;
    /// Stores the mark durably; returns only once it would survive a crash.
    fn save(&self, mark_ms: i64) -> Result<(), Error>;
    /// Runs `wait`, which blocks until another thread has written the mark
    /// this thread needs: the generator calls it instead of blocking on its
    /// own, so that a store whose host holds something a writer needs back
    /// (Python's GIL, which the writer may have let go around `save`) can
    /// let it go for the wait. By default it just runs `wait`.
    ///
    /// ```
    /// use snowflake::{Error, MarkStore};
    ///
    /// struct Fixed(i64);
    /// impl MarkStore for Fixed {
    ///     fn load(&self) -> Result<Option<i64>, Error> { Ok(Some(self.0)) }
    ///     fn save(&self, _mark_ms: i64) -> Result<(), Error> { Ok(()) }
    /// }
    /// let waited = std::sync::atomic::AtomicBool::new(false);
    /// Fixed(0).wait_for_writer(&|| waited.store(true, std::sync::atomic::Ordering::Relaxed));
    /// assert!(waited.into_inner());
    /// ```
    fn wait_for_writer(&self, wait: &(dyn Fn() + Sync)) {
        wait();
    }
}

impl<S: MarkStore + ?Sized> MarkStore for std::sync::Arc<S> {
    fn open(&self, layout: &Layout) -> Result<(), Error> {
        (**self).open(layout)
    }

    fn confirm(&self) -> Result<(), Error> {
        (**self).confirm()
    }

    fn load(&self) -> Result<Option<i64>, Error> {
        (**self).load()
    }

    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        (**self).save(mark_ms)
    }

    fn wait_for_writer(&self, wait: &(dyn Fn() + Sync)) {
        (**self).wait_for_writer(wait)
    }
}

/// The high-water mark of generators that issue from one
/// [`SharedState`](crate::SharedState), each in a process of its own (see
/// [`Generator::next_id_on`](crate::Generator::next_id_on)): what a
/// [`MarkStore`] is to one generator, for several at once.
///
/// The step asks for a mark before it publishes the first ID of a time
/// unit, and publishes nothing if the mark fails: so, as with a store,
/// whatever was made durable covers every ID issued. How the mark is kept,
/// who writes it when several processes ask at once, and how far ahead it
/// runs is the implementation's: it is called once per time unit, not per
/// ID, from whichever generator opens the unit.
///
/// `()` is the mark of generators that need none: it covers everything and
/// survives nothing.
///
/// ```
/// use std::sync::atomic::{AtomicI64, Ordering};
/// use snowflake::{Error, SharedMark};
///
/// /// Covers a second ahead of what is asked, so that it is written rarely.
/// struct Ahead(AtomicI64);
/// impl SharedMark for Ahead {
///     fn cover(&self, mark_ms: i64) -> Result<(), Error> {
///         if mark_ms > self.0.load(Ordering::Acquire) {
///             // A real mark is made durable here, before it is published.
///             self.0.fetch_max(mark_ms + 1_000, Ordering::AcqRel);
///         }
///         Ok(())
///     }
/// }
/// let mark = Ahead(AtomicI64::new(0));
/// mark.cover(5)?;
/// assert_eq!(mark.0.load(Ordering::Acquire), 1_005);
/// # Ok::<(), snowflake::Error>(())
/// ```
pub trait SharedMark {
    /// Returns once a durable mark covers every Unix millisecond up to and
    /// including `mark_ms`, or fails, and then no ID of that time is issued.
    fn cover(&self, mark_ms: i64) -> Result<(), Error>;
}

impl SharedMark for () {
    fn cover(&self, _mark_ms: i64) -> Result<(), Error> {
        Ok(())
    }
}

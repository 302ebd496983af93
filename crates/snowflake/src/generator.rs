//! The lock-free generator.
//!
//! All of its state that decides which ID comes next is one `AtomicU64`
//! holding the last issued ID without its node fields: the time unit and
//! the sequence number in their own places, `unit << time_shift | sequence
//! << sequence_shift`. Every caller reads the clock, computes the successor
//! and publishes it with one compare-and-swap; a caller that loses the race
//! starts over. The time field lies above every other, so the state orders
//! as the (unit, sequence) pair does; because it only ever grows, and the
//! node fields are constant, every ID is strictly greater than every ID
//! issued before it, from any thread. An ID is the state with the node bits
//! set: nothing is unpacked or shifted on the way out.

use alloc::sync::Arc;

use crate::batch::IdBatch;
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Repr};
use crate::id::Id;
use crate::layout::{Field, Layout};
use crate::reserve::{Reserve, unit_end_ms};
use crate::store::SharedMark;
use crate::sync::{AtomicU64, Ordering};

/// Hands out unique, strictly increasing IDs for one node.
///
/// It is `Send + Sync` and lock-free: share it by reference or in an `Arc`.
/// It is deliberately neither `Clone` nor `Copy`, since two copies would hand
/// out the same IDs.
///
/// ```
/// use snowflake::{Generator, Layout};
///
/// let generator = Generator::new(Layout::twitter(), &[("datacenter", 1), ("machine", 7)])?;
/// let a = generator.next_id()?;
/// let b = generator.next_id()?;
/// assert!(b > a);
/// let twitter = Layout::twitter();
/// let d = twitter.decode(b)?;
/// assert_eq!((d.field("datacenter"), d.field("machine")), (Some(1), Some(7)));
/// # Ok::<(), snowflake::Error>(())
/// ```
pub struct Generator<C: Clock = SystemClock> {
    /// The last issued ID without its node bits. The only state IDs depend on.
    state: AtomicU64,
    clock: C,
    derived: Derived,
    reserve: Option<Reserve>,
    counters: Counters,
    layout: Layout,
}

/// A clock reading: milliseconds since the epoch, and the unit they fall in.
#[derive(Clone, Copy, Debug)]
struct Reading {
    ms: u64,
    unit: u64,
}

/// Constants derived once from the layout, so the hot path does no lookups.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Derived {
    pub(crate) epoch_ms: i64,
    pub(crate) tick_ms: u64,
    pub(crate) max_units: u64,
    pub(crate) time_shift: u8,
    pub(crate) seq_shift: u8,
    pub(crate) seq_max: u64,
    /// One sequence number in its place: `1 << seq_shift`.
    pub(crate) seq_one: u64,
    /// The sequence field, all ones in its place: `seq_max << seq_shift`.
    pub(crate) seq_mask: u64,
    pub(crate) node_bits: u64,
    /// How far, in ms, the clock may be behind the last issued ID's time
    /// (beyond the lead) before calls fail.
    pub(crate) tolerance_ms: u64,
    /// How far, in ms, an ID's time may run ahead of the clock.
    pub(crate) lead_ms: u64,
}

impl Derived {
    /// The constants of a generator of `layout` whose sequence field is `seq`,
    /// with its node fields' bits and its checked settings.
    pub(crate) fn new(
        layout: &Layout,
        seq: &Field,
        node_bits: u64,
        tolerance_ms: u64,
        lead_ms: u64,
    ) -> Self {
        Derived {
            epoch_ms: layout.epoch_ms(),
            tick_ms: layout.tick_ms(),
            max_units: layout.max_time_units(),
            time_shift: layout.time_shift(),
            seq_shift: seq.shift(),
            seq_max: seq.max(),
            seq_one: 1 << seq.shift(),
            seq_mask: seq.max() << seq.shift(),
            node_bits,
            tolerance_ms,
            lead_ms,
        }
    }

    /// The state of the ID with this time unit and sequence number: the ID
    /// without its node bits.
    pub(crate) fn state(&self, unit: u64, seq: u64) -> u64 {
        (unit << self.time_shift) | (seq << self.seq_shift)
    }

    /// The time unit of a state: nothing lies above the time field.
    #[inline]
    fn unit_of(&self, state: u64) -> u64 {
        state >> self.time_shift
    }

    /// The sequence number of a state.
    #[inline]
    fn seq_of(&self, state: u64) -> u64 {
        (state >> self.seq_shift) & self.seq_max
    }
}

#[derive(Default)]
struct Counters {
    /// IDs of finished time units, offset so that the initial state counts 0.
    retired: AtomicU64,
    exhaustion_waits: AtomicU64,
    clock_backwards: AtomicU64,
    clock_backwards_max_ms: AtomicU64,
    lead_issues: AtomicU64,
}

/// What a generator has done, for metrics. Counters only grow, except that
/// `issued` may lag for an instant while another thread moves to a new time
/// unit.
///
/// ```
/// let generator = snowflake::Generator::new(snowflake::Layout::twitter(), &[])?;
/// generator.next_ids(10)?;
/// assert_eq!(generator.stats().issued, 10);
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GeneratorStats {
    /// IDs issued.
    pub issued: u64,
    /// Calls that found the sequence used up and waited for the next time unit.
    pub exhaustion_waits: u64,
    /// Calls that found the clock behind the last issued time.
    pub clock_backwards: u64,
    /// The largest step back seen, in milliseconds.
    pub clock_backwards_max_ms: u64,
    /// How far the last issued time is ahead of the clock now, in milliseconds.
    pub lead_ms: u64,
    /// Calls that borrowed a time unit from the future (the lead policy).
    pub lead_issues: u64,
    /// High-water marks written to the store.
    pub mark_writes: u64,
    /// The highest time reserved in the store, Unix milliseconds.
    pub mark_ms: Option<i64>,
}

/// A generator whose clock is chosen at run time: the one type a service
/// holds whether it runs on the [`SystemClock`], a [`CachedClock`] or a
/// [`ManualClock`] in its tests.
///
/// [`CachedClock`]: crate::CachedClock
/// [`ManualClock`]: crate::ManualClock
///
/// ```
/// use std::sync::Arc;
/// use snowflake::{CachedClock, Clock, Generator, Layout, SharedGenerator, SystemClock};
///
/// let fast = true;
/// let clock: Arc<dyn Clock> = if fast { Arc::new(CachedClock::shared()) } else { Arc::new(SystemClock) };
/// let generator: SharedGenerator = Generator::builder(Layout::twitter())
///     .node(&[("machine", 1)])
///     .clock(clock)
///     .build()?;
/// assert!(generator.next_id()? < generator.next_id()?);
/// # Ok::<(), snowflake::Error>(())
/// ```
pub type SharedGenerator = Generator<Arc<dyn Clock>>;

/// A generator's state kept apart from any generator: the one word that
/// decides which ID comes next, for generators that issue through
/// [`Generator::next_id_on`]. It holds no pointer and needs no drop, so it
/// can live in memory that several processes map, each with a generator
/// of its own over it.
///
/// ```
/// use snowflake::{Generator, Layout, SharedState};
///
/// static SHARED: SharedState = SharedState::new();
/// let generator = Generator::new(Layout::twitter(), &[("machine", 1)])?;
/// // `()`: no mark, so nothing that survives a restart.
/// let a = generator.next_id_on(&SHARED, &())?;
/// assert!(generator.next_id_on(&SHARED, &())? > a);
/// # Ok::<(), snowflake::Error>(())
/// ```
#[repr(transparent)]
pub struct SharedState(pub(crate) AtomicU64);

impl SharedState {
    /// A state from which nothing was issued.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        SharedState(AtomicU64::new(0))
    }

    /// A state from which nothing was issued.
    #[cfg(loom)]
    pub fn new() -> Self {
        SharedState(AtomicU64::new(0))
    }
}

impl Default for SharedState {
    fn default() -> Self {
        SharedState::new()
    }
}

impl core::fmt::Debug for SharedState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("SharedState")
            .field(&self.0.load(Ordering::Relaxed))
            .finish()
    }
}

/// What the issuing step calls before it publishes the first ID of a time
/// unit: the generator's own reserve, or a mark shared with other
/// generators. One step serves both, so neither can drift from the other.
trait Cover {
    fn cover(&self, layout: &Layout, unit: u64) -> Result<(), Error>;
}

impl Cover for Option<Reserve> {
    #[inline]
    fn cover(&self, _layout: &Layout, unit: u64) -> Result<(), Error> {
        match self {
            Some(reserve) => reserve.ensure(unit),
            None => Ok(()),
        }
    }
}

/// A [`SharedMark`] seen by the step, which speaks in time units.
struct Shared<'a, M: ?Sized>(&'a M);

impl<M: SharedMark + ?Sized> Cover for Shared<'_, M> {
    #[inline]
    fn cover(&self, layout: &Layout, unit: u64) -> Result<(), Error> {
        self.0.cover(unit_end_ms(layout, unit))
    }
}

impl Generator {
    /// The largest clock step back a generator may be told to wait out, in milliseconds.
    ///
    /// ```
    /// use snowflake::{Generator, Layout};
    ///
    /// let builder = Generator::builder(Layout::twitter());
    /// assert!(builder.tolerance_ms(Generator::MAX_TOLERANCE_MS + 1).build().is_err());
    /// ```
    pub const MAX_TOLERANCE_MS: u64 = 60_000;

    /// The default clock step back, in milliseconds, that a generator waits
    /// out instead of failing.
    ///
    /// ```
    /// assert_eq!(snowflake::Generator::DEFAULT_TOLERANCE_MS, 5);
    /// ```
    pub const DEFAULT_TOLERANCE_MS: u64 = 5;

    /// The largest lead into the future a generator may be allowed, in milliseconds.
    ///
    /// ```
    /// use snowflake::{Generator, Layout};
    ///
    /// let builder = Generator::builder(Layout::twitter());
    /// assert!(builder.max_lead_ms(Generator::MAX_LEAD_MS).build().is_ok());
    /// ```
    pub const MAX_LEAD_MS: u64 = 1_000;

    /// How far ahead the high-water mark is reserved by default, in milliseconds.
    ///
    /// ```
    /// assert_eq!(snowflake::Generator::DEFAULT_RESERVE_MS, 1_000);
    /// ```
    pub const DEFAULT_RESERVE_MS: u64 = 1_000;

    /// The furthest ahead a high-water mark may be reserved, in milliseconds.
    ///
    /// ```
    /// use snowflake::{Generator, Layout};
    ///
    /// let builder = Generator::builder(Layout::twitter());
    /// assert!(builder.reserve_ms(Generator::MAX_RESERVE_MS + 1).build().is_err());
    /// ```
    pub const MAX_RESERVE_MS: u64 = 60_000;
}

impl<C: Clock> Generator<C> {
    /// Puts together a generator whose settings the builder has checked;
    /// `initial` is the state (see [`Derived::state`]) counted as already issued.
    pub(crate) fn from_parts(
        layout: Layout,
        clock: C,
        derived: Derived,
        reserve: Option<Reserve>,
        initial: u64,
    ) -> Self {
        let counters = Counters::default();
        counters.retired.store(
            (derived.seq_of(initial) + 1).wrapping_neg(),
            Ordering::Relaxed,
        );
        Generator {
            state: AtomicU64::new(initial),
            clock,
            derived,
            reserve,
            counters,
            layout,
        }
    }
}

impl<C: Clock> Generator<C> {
    /// The state it started from: what [`GeneratorBuilder::resume`] hands
    /// to a shared state.
    ///
    /// [`GeneratorBuilder::resume`]: crate::GeneratorBuilder::resume
    pub(crate) fn initial_state(&self) -> u64 {
        self.state.load(Ordering::Acquire)
    }
}

impl<C: Clock> Generator<C> {
    /// The next ID: strictly greater than every ID this generator returned
    /// before, from any thread.
    ///
    /// Fails when the clock stepped back further than the tolerance (the error
    /// says by how much; the generator recovers once the clock catches up),
    /// when the time field ran out, or when the mark store cannot be written.
    ///
    /// ```
    /// let generator = snowflake::Generator::new(snowflake::Layout::twitter(), &[])?;
    /// let id = generator.next_id()?;
    /// assert!(id.get() > 0);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<Id, Error> {
        self.issue_one(&self.state, &self.reserve)
    }

    /// The next ID from `shared`, a state this generator does not own, whose
    /// high-water mark is `mark`: strictly greater than every ID issued from
    /// `shared` before, by any generator of the same layout, in any thread
    /// or process that maps it. The generator's own state and store are not
    /// used; its settings (layout, node, clock, tolerance, lead) are.
    ///
    /// This is [`Generator::next_id`]'s own step, the same compare-and-swap
    /// on the same packed word, for a state that must live where no
    /// generator can: in memory that several processes share, as a database
    /// server's backends do. Every generator issuing from one `shared` must
    /// be built with the same layout and node; `shared` starts as a
    /// generator without a store does, or above a stored mark with
    /// [`GeneratorBuilder::resume`](crate::GeneratorBuilder::resume).
    ///
    /// Before the first ID of a time unit is published, `mark` is asked to
    /// [`cover`](SharedMark::cover) the unit's last millisecond; an error
    /// there is returned and nothing is issued.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicI64, Ordering};
    /// use snowflake::{Error, Generator, Layout, SharedMark, SharedState};
    ///
    /// /// The mark of a test: kept in memory, it survives nothing.
    /// #[derive(Default)]
    /// struct Covered(AtomicI64);
    /// impl SharedMark for Covered {
    ///     fn cover(&self, mark_ms: i64) -> Result<(), Error> {
    ///         self.0.fetch_max(mark_ms, Ordering::SeqCst);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let shared = SharedState::new();
    /// let mark = Covered::default();
    /// // Two generators, as two processes would each build their own.
    /// let a = Generator::new(Layout::twitter(), &[("machine", 7)])?;
    /// let b = Generator::new(Layout::twitter(), &[("machine", 7)])?;
    /// let first = a.next_id_on(&shared, &mark)?;
    /// let second = b.next_id_on(&shared, &mark)?;
    /// assert!(second > first);
    /// assert!(mark.0.load(Ordering::SeqCst) >= Layout::twitter().decode(second)?.timestamp_ms());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id_on<M: SharedMark + ?Sized>(
        &self,
        shared: &SharedState,
        mark: &M,
    ) -> Result<Id, Error> {
        self.issue_one(&shared.0, &Shared(mark))
    }

    /// One ID from `state`, `cover`ing a new time unit before its first ID
    /// is published: [`Generator::next_id`] over the generator's own state
    /// and reserve, or [`Generator::next_id_on`] over a shared state and mark.
    #[inline(always)]
    fn issue_one(&self, state: &AtomicU64, cover: &impl Cover) -> Result<Id, Error> {
        let d = &self.derived;
        // The common case, decided in a few instructions: the clock is
        // still in the time unit of the last ID and that unit has a sequence
        // number left. The unit was checked against the epoch, the end of
        // the time field and the mark when its first ID was issued, so
        // nothing more needs checking. Anything else, or a lost race, takes
        // `advance_on`. As there, the state is read before the clock.
        let current = state.load(Ordering::Acquire);
        let now_ms = self.clock.now_ms();
        let unit_start_ms = (self.start_ms(d.unit_of(current)) as i64).wrapping_add(d.epoch_ms);
        let in_unit = now_ms
            .checked_sub(unit_start_ms)
            .is_some_and(|into| (into as u64) < d.tick_ms);
        // The sequence had a number left unless adding one carried out of
        // its field and left it all zeros. Wrapping: on a layout whose time
        // field is full that carry would overflow, and the sum is not used.
        let next = current.wrapping_add(d.seq_one);
        if in_unit
            && next & d.seq_mask != 0
            && state
                .compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            return Ok(Id::new(next | d.node_bits));
        }
        let (first, _) = self.advance_on(state, 1, cover)?;
        Ok(Id::new(first | d.node_bits))
    }

    /// Reserves up to `n` consecutive sequence numbers of one time unit with
    /// a single compare-and-swap: the batch path for servers.
    ///
    /// The batch holds at least one ID when `n > 0`, and fewer than `n` when
    /// the current time unit has fewer left; call again for the rest. Its IDs
    /// are strictly increasing and all greater than every ID this generator
    /// returned before the call; IDs handed out by other threads at the same
    /// time are greater or smaller than the whole batch, never inside it.
    ///
    /// ```
    /// let generator = snowflake::Generator::new(snowflake::Layout::twitter(), &[])?;
    /// let before = generator.next_id()?;
    /// let batch = generator.next_ids(4096)?;
    /// assert!(batch.first().unwrap() > before);
    /// assert!(generator.next_id()? > batch.last_id().unwrap());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn next_ids(&self, n: u64) -> Result<IdBatch, Error> {
        if n == 0 {
            return Ok(IdBatch::new(0, 0, 0));
        }
        let (first, count) = self.advance_on(&self.state, n, &self.reserve)?;
        Ok(IdBatch::new(
            first | self.derived.node_bits,
            count,
            self.derived.seq_one,
        ))
    }

    /// Shrinks the stored mark to the last ID actually issued, so that a
    /// restart right after a clean shutdown does not wait out the rest of the
    /// reserved window. Consumes the generator: nothing can be issued after it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use snowflake::{Error, Generator, Layout, ManualClock, MarkStore};
    ///
    /// #[derive(Default)]
    /// struct InMemory(Mutex<Option<i64>>);
    /// impl MarkStore for InMemory {
    ///     fn load(&self) -> Result<Option<i64>, Error> { Ok(*self.0.lock().unwrap()) }
    ///     fn save(&self, mark_ms: i64) -> Result<(), Error> {
    ///         *self.0.lock().unwrap() = Some(mark_ms);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let now = 1_700_000_000_000;
    /// let store = Arc::new(InMemory::default());
    /// let generator = Generator::builder(Layout::twitter())
    ///     .clock(Arc::new(ManualClock::new(now)))
    ///     .store(store.clone())
    ///     .build()?;
    /// generator.next_id()?;
    /// assert!(store.load()? > Some(now)); // reserved ahead
    /// generator.close()?;
    /// assert_eq!(store.load()?, Some(now)); // down to the last ID issued
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn close(self) -> Result<(), Error> {
        if let Some(reserve) = &self.reserve {
            let last = self.derived.unit_of(self.state.load(Ordering::Acquire));
            reserve.release(last)?;
        }
        Ok(())
    }

    /// The layout this generator issues IDs in.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The clock it reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Whether an ID could be issued now without an error: the clock is not
    /// behind the last issued time beyond the tolerance, and the time field
    /// has not run out.
    pub fn ready(&self) -> Result<(), Error> {
        let last = self.derived.unit_of(self.state.load(Ordering::Acquire));
        let now = self.read(self.clock.now_ms())?;
        match self.behind(now, last) {
            Some((_, Some(err))) => Err(err),
            _ => Ok(()),
        }
    }

    /// A snapshot of what the generator has done.
    pub fn stats(&self) -> GeneratorStats {
        let c = &self.counters;
        let state = self.state.load(Ordering::Relaxed);
        let last = self.derived.unit_of(state);
        let last_ms = self.start_ms(last);
        let now_ms = self.read(self.clock.now_ms()).map_or(last_ms, |now| now.ms);
        GeneratorStats {
            issued: c
                .retired
                .load(Ordering::Relaxed)
                .wrapping_add(self.derived.seq_of(state) + 1),
            exhaustion_waits: c.exhaustion_waits.load(Ordering::Relaxed),
            clock_backwards: c.clock_backwards.load(Ordering::Relaxed),
            clock_backwards_max_ms: c.clock_backwards_max_ms.load(Ordering::Relaxed),
            // Only the lead the policy allows; a clock that stepped back is
            // counted in `clock_backwards`, not here.
            lead_ms: last_ms.saturating_sub(now_ms).min(self.derived.lead_ms),
            lead_issues: c.lead_issues.load(Ordering::Relaxed),
            mark_writes: self.reserve.as_ref().map_or(0, Reserve::writes),
            mark_ms: self.reserve.as_ref().map(Reserve::mark_ms),
        }
    }

    /// Milliseconds since the epoch at which a time unit begins: the time
    /// an ID of that unit carries. It fits: the layout checked at
    /// construction that the end of its last unit fits in i64 milliseconds.
    #[inline]
    fn start_ms(&self, unit: u64) -> u64 {
        unit * self.derived.tick_ms
    }

    /// A clock reading as milliseconds since the epoch and the unit they fall in.
    #[inline]
    fn read(&self, now_ms: i64) -> Result<Reading, Error> {
        let d = &self.derived;
        if now_ms < d.epoch_ms {
            return Err(Error::new(Repr::BeforeEpoch {
                timestamp: now_ms,
                epoch: d.epoch_ms,
            }));
        }
        let since = now_ms.abs_diff(d.epoch_ms);
        let units = if d.tick_ms == 1 {
            since
        } else {
            since / d.tick_ms
        };
        if units > d.max_units {
            return Err(Error::new(Repr::TimeExhausted {
                last: self.layout.last_timestamp_ms(),
            }));
        }
        Ok(Reading {
            ms: since,
            unit: units,
        })
    }

    /// How far the clock is behind the time of the last issued unit, in ms,
    /// when that is more than the allowed lead, and the error if it is more
    /// than the lead and the tolerance together. Measured in milliseconds,
    /// not units, so that the bounds hold whatever the tick.
    fn behind(&self, now: Reading, last: u64) -> Option<(u64, Option<Error>)> {
        let d = &self.derived;
        let last_ms = self.start_ms(last);
        if last_ms <= now.ms + d.lead_ms {
            return None;
        }
        let behind_ms = last_ms - now.ms;
        let err = (behind_ms > d.tolerance_ms + d.lead_ms).then(|| {
            Error::new(Repr::ClockBackwards {
                by_ms: behind_ms,
                tolerance_ms: d.tolerance_ms,
            })
        });
        Some((behind_ms, err))
    }

    /// Counts a step back of the clock, once per call however often the
    /// call loops; fails if it is beyond the tolerance.
    fn check_behind(&self, now: Reading, last: u64, counted: &mut bool) -> Result<(), Error> {
        let Some((behind_ms, err)) = self.behind(now, last) else {
            return Ok(());
        };
        if !std::mem::replace(counted, true) {
            self.counters
                .clock_backwards
                .fetch_add(1, Ordering::Relaxed);
        }
        self.counters
            .clock_backwards_max_ms
            .fetch_max(behind_ms, Ordering::Relaxed);
        err.map_or(Ok(()), Err)
    }

    /// Claims up to `want` sequence numbers from `state`; returns the first
    /// one's state (an ID without its node bits) and how many were claimed.
    /// All waiting happens outside the CAS.
    #[inline]
    fn advance_on(
        &self,
        state: &AtomicU64,
        want: u64,
        cover: &impl Cover,
    ) -> Result<(u64, u64), Error> {
        let d = &self.derived;
        let mut waited = false;
        let mut counted = false;
        loop {
            // The state is read before the clock, never after: a thread
            // descheduled between the two then sees a clock that is late,
            // which is harmless, instead of one that looks like it went
            // backwards past the tolerance.
            let current = state.load(Ordering::Acquire);
            let now = self.read(self.clock.now_ms())?;
            let last = d.unit_of(current);
            let seq = d.seq_of(current);
            // `new_unit`: whether the claim opens a time unit, known from the
            // branch taken rather than recomputed from `first` on every call.
            let (first, count, new_unit) = if now.unit > last {
                (d.state(now.unit, 0), want.min(d.seq_max + 1), true)
            } else {
                if last > now.unit {
                    self.check_behind(now, last, &mut counted)?;
                }
                if seq < d.seq_max {
                    (current + d.seq_one, want.min(d.seq_max - seq), false)
                } else if last < d.max_units && self.start_ms(last + 1) <= now.ms + d.lead_ms {
                    // The next unit's IDs carry its start time: borrow it
                    // only if that is within the lead of the clock.
                    self.counters.lead_issues.fetch_add(1, Ordering::Relaxed);
                    (d.state(last + 1, 0), want.min(d.seq_max + 1), true)
                } else {
                    if last >= d.max_units {
                        return Err(Error::new(Repr::TimeExhausted {
                            last: self.layout.last_timestamp_ms(),
                        }));
                    }
                    if !waited {
                        waited = true;
                        self.counters
                            .exhaustion_waits
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    self.clock.wait_toward(self.layout.timestamp_ms(last + 1));
                    continue;
                }
            };
            // A unit already issued in was covered by the mark before its
            // first ID was published (the initial state's unit has its
            // sequence used up, so it is never issued in again): only a new
            // unit needs the store.
            if new_unit {
                cover.cover(&self.layout, d.unit_of(first))?;
            }
            // The claim stays inside the sequence field: `count` is at most
            // what is left of it.
            let claimed = first + ((count - 1) << d.seq_shift);
            if state
                .compare_exchange_weak(current, claimed, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                if new_unit {
                    self.counters.retired.fetch_add(seq + 1, Ordering::Relaxed);
                }
                return Ok((first, count));
            }
        }
    }
}

impl<C: Clock> core::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Generator")
            .field("layout", &self.layout.name())
            .field("node_bits", &self.derived.node_bits)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

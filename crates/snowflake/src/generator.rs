//! The lock-free generator.
//!
//! All of its state that decides which ID comes next is one `AtomicU64`
//! holding the last issued (time unit, sequence) pair, packed as
//! `unit << sequence_bits | sequence`. Every caller reads the clock, computes
//! the successor of that pair and publishes it with one compare-and-swap; a
//! caller that loses the race starts over. Because the packed pair only ever
//! grows, and the node fields are constant, every ID is strictly greater than
//! every ID issued before it, from any thread.

use alloc::boxed::Box;
use alloc::string::ToString;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Repr};
use crate::id::Id;
use crate::layout::Layout;
use crate::store::MarkStore;
use crate::sync::{AtomicU64, Mutex, Ordering};

/// The largest clock step back a generator may be told to wait out.
pub const MAX_TOLERANCE_MS: u64 = 60_000;
/// The largest lead into the future a generator may be allowed.
pub const MAX_LEAD_MS: u64 = 1_000;
/// The default clock step back that a generator waits out instead of failing.
pub const DEFAULT_TOLERANCE_MS: u64 = 5;
/// How far ahead the high-water mark is reserved by default.
pub const DEFAULT_RESERVE_MS: u64 = 1_000;
/// The furthest ahead a high-water mark may be reserved.
pub const MAX_RESERVE_MS: u64 = 60_000;

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
    /// The last issued (unit, sequence), packed. The only state IDs depend on.
    state: AtomicU64,
    clock: C,
    plan: Plan,
    reserve: Option<Reserve>,
    counters: Counters,
    layout: Layout,
}

/// Constants derived once from the layout, so the hot path does no lookups.
#[derive(Clone, Copy, Debug)]
struct Plan {
    epoch_ms: i64,
    tick_ms: u64,
    max_units: u64,
    time_shift: u8,
    seq_bits: u8,
    seq_shift: u8,
    seq_max: u64,
    node_bits: u64,
    tolerance_units: u64,
    tolerance_ms: u64,
    lead_units: u64,
}

struct Reserve {
    store: Box<dyn MarkStore>,
    /// The highest unit already durable in the store, inclusive.
    reserved: AtomicU64,
    window_units: u64,
    lock: Mutex<()>,
}

#[derive(Default)]
struct Counters {
    /// IDs of finished time units, offset so that the initial state counts 0.
    retired: AtomicU64,
    exhaustion_waits: AtomicU64,
    clock_backwards: AtomicU64,
    clock_backwards_max_ms: AtomicU64,
    lead_issues: AtomicU64,
    mark_writes: AtomicU64,
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

/// Configures a [`Generator`]; see [`Generator::builder`].
pub struct GeneratorBuilder<'a, C: Clock = SystemClock> {
    layout: Layout,
    node: &'a [(&'a str, u64)],
    clock: C,
    tolerance_ms: u64,
    lead_ms: u64,
    store: Option<Box<dyn MarkStore>>,
    reserve_ms: u64,
}

impl Generator<SystemClock> {
    /// A generator on the system clock with default settings, for the node
    /// whose fields have these values (fields left out are 0).
    ///
    /// ```
    /// use snowflake::{Generator, Layout};
    ///
    /// let err = Generator::new(Layout::twitter(), &[("machine", 32)]).unwrap_err();
    /// assert_eq!(err.to_string(), "machine 32 is out of range 0..=31 (5 bits)");
    /// ```
    pub fn new(layout: Layout, node: &[(&str, u64)]) -> Result<Self, Error> {
        Generator::builder(layout).node(node).build()
    }

    /// Starts configuring a generator for `layout`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use snowflake::{Generator, Layout, ManualClock};
    ///
    /// let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    /// let generator = Generator::builder(Layout::twitter())
    ///     .node(&[("machine", 3)])
    ///     .clock(clock.clone())
    ///     .tolerance_ms(10)
    ///     .build()?;
    /// let id = generator.next_id()?;
    /// assert_eq!(Layout::twitter().decode(id)?.timestamp_ms(), 1_700_000_000_000);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn builder<'a>(layout: Layout) -> GeneratorBuilder<'a, SystemClock> {
        GeneratorBuilder {
            layout,
            node: &[],
            clock: SystemClock,
            tolerance_ms: DEFAULT_TOLERANCE_MS,
            lead_ms: 0,
            store: None,
            reserve_ms: DEFAULT_RESERVE_MS,
        }
    }
}

impl<'a, C: Clock> GeneratorBuilder<'a, C> {
    /// The node's field values by name; fields left out are 0. The sequence
    /// is the generator's to set and cannot be given.
    pub fn node(mut self, node: &'a [(&'a str, u64)]) -> Self {
        self.node = node;
        self
    }

    /// The clock to read; [`SystemClock`] by default.
    pub fn clock<D: Clock>(self, clock: D) -> GeneratorBuilder<'a, D> {
        GeneratorBuilder {
            layout: self.layout,
            node: self.node,
            clock,
            tolerance_ms: self.tolerance_ms,
            lead_ms: self.lead_ms,
            store: self.store,
            reserve_ms: self.reserve_ms,
        }
    }

    /// How far the clock may step back and be waited out (default 5 ms, at
    /// most [`MAX_TOLERANCE_MS`]); beyond it, calls fail with the size of the step.
    pub fn tolerance_ms(mut self, ms: u64) -> Self {
        self.tolerance_ms = ms;
        self
    }

    /// Lets the generator borrow time units from the future when the sequence
    /// is used up, up to this many milliseconds ahead of the clock (default 0:
    /// never; at most [`MAX_LEAD_MS`]). The lead is reported in
    /// [`GeneratorStats::lead_ms`].
    pub fn max_lead_ms(mut self, ms: u64) -> Self {
        self.lead_ms = ms;
        self
    }

    /// Keeps a high-water mark in `store` so that a restarted generator never
    /// issues an ID at or below one issued before the restart.
    pub fn store(mut self, store: impl MarkStore + 'static) -> Self {
        self.store = Some(Box::new(store));
        self
    }

    /// How far ahead of use the mark is reserved (default 1,000 ms): the
    /// store is written about twice per this window (topped up at its half).
    pub fn reserve_ms(mut self, ms: u64) -> Self {
        self.reserve_ms = ms;
        self
    }

    /// Checks the settings, reads the stored mark and builds the generator.
    ///
    /// When the clock is behind the stored mark, it waits until the clock is
    /// past it, if that is at most the tolerance plus the reserve window away
    /// (the mark is written that far ahead of use); otherwise it fails and
    /// says by how much the clock is behind.
    pub fn build(self) -> Result<Generator<C>, Error> {
        let layout = self.layout;
        let Some(seq) = layout.sequence() else {
            return Err(Error::new(Repr::NoSequence {
                layout: layout.name().into_owned(),
            }));
        };
        let mut node_bits = 0;
        for (name, value) in self.node {
            if *name == seq.name() {
                return Err(Error::new(Repr::InvalidSetting {
                    field: "sequence",
                    value: value.to_string(),
                    allowed: "the generator sets the sequence itself; give only the node fields",
                }));
            }
        }
        if !self.node.is_empty() {
            node_bits = layout.compose(layout.epoch_ms(), self.node)?.get();
        }
        check_setting("tolerance_ms", self.tolerance_ms, MAX_TOLERANCE_MS)?;
        check_setting("max_lead_ms", self.lead_ms, MAX_LEAD_MS)?;
        check_setting("reserve_ms", self.reserve_ms, MAX_RESERVE_MS)?;
        let tick = layout.tick_ms();
        let plan = Plan {
            epoch_ms: layout.epoch_ms(),
            tick_ms: tick,
            max_units: layout.max_time_units(),
            time_shift: layout.time_shift(),
            seq_bits: seq.bits(),
            seq_shift: seq.shift(),
            seq_max: seq.max(),
            node_bits,
            // Rounded up: a 5 ms tolerance on a 10 ms tick still tolerates
            // one tick, rather than none.
            tolerance_units: self.tolerance_ms.div_ceil(tick),
            tolerance_ms: self.tolerance_ms,
            lead_units: self.lead_ms.div_ceil(tick),
        };
        let mut initial = 0;
        let reserve = match self.store {
            None => None,
            Some(store) => {
                store.open(&layout)?;
                let mark_unit = match store.load()? {
                    None => 0,
                    Some(mark_ms) if mark_ms < plan.epoch_ms => 0,
                    Some(mark_ms) => layout.time_units(mark_ms).map_err(|_| {
                        Error::new(Repr::TimeExhausted {
                            last: layout.last_timestamp_ms(),
                        })
                    })?,
                };
                // The mark runs up to a window ahead of the last ID issued
                // (less after a clean `close`), so a quick restart finds it
                // ahead of the clock: wait that out, but no more.
                let window_units = (self.reserve_ms / tick).max(1);
                let allowance = plan.tolerance_units + window_units;
                loop {
                    let now_ms = self.clock.now_ms();
                    let now = layout.time_units(now_ms)?;
                    if now > mark_unit {
                        break;
                    }
                    if mark_unit > now.saturating_add(allowance) {
                        return Err(Error::new(Repr::MarkAhead {
                            mark_ms: layout.timestamp_ms(mark_unit),
                            now_ms,
                            tolerance_ms: allowance * tick,
                        }));
                    }
                    self.clock.wait_toward(layout.timestamp_ms(mark_unit + 1));
                }
                // Everything up to and including the mark's unit may have been
                // issued before the restart: start as if it was all used.
                initial = (mark_unit << plan.seq_bits) | plan.seq_max;
                Some(Reserve {
                    store,
                    reserved: AtomicU64::new(mark_unit),
                    window_units,
                    lock: Mutex::new(()),
                })
            }
        };
        let counters = Counters::default();
        counters.retired.store(
            ((initial & plan.seq_max) + 1).wrapping_neg(),
            Ordering::Relaxed,
        );
        Ok(Generator {
            state: AtomicU64::new(initial),
            clock: self.clock,
            plan,
            reserve,
            counters,
            layout,
        })
    }
}

fn check_setting(field: &'static str, value: u64, max: u64) -> Result<(), Error> {
    if value > max {
        return Err(Error::new(Repr::InvalidSetting {
            field,
            value: value.to_string(),
            allowed: match field {
                "max_lead_ms" => "the lead is at most 1000 ms (MAX_LEAD_MS)",
                "reserve_ms" => "the reserve is at most 60000 ms (MAX_RESERVE_MS)",
                _ => "the tolerance is at most 60000 ms (MAX_TOLERANCE_MS)",
            },
        }));
    }
    Ok(())
}

/// A run of consecutive IDs from one time unit, from [`Generator::next_ids`].
///
/// ```
/// let generator = snowflake::Generator::new(snowflake::Layout::twitter(), &[])?;
/// let batch = generator.next_ids(3)?;
/// let ids: Vec<_> = batch.collect();
/// assert!(ids.len() >= 1 && ids.len() <= 3);
/// assert!(ids.windows(2).all(|w| w[0] < w[1]));
/// # Ok::<(), snowflake::Error>(())
/// ```
// Not `Clone`: a copy would hand out the same IDs again.
#[derive(Debug, PartialEq, Eq)]
pub struct IdBatch {
    next: u64,
    left: u64,
    step: u64,
}

impl IdBatch {
    /// The first ID of what is left, if any.
    pub fn first(&self) -> Option<Id> {
        (self.left > 0).then_some(Id::new(self.next))
    }

    /// The last ID of the batch, if any.
    pub fn last_id(&self) -> Option<Id> {
        (self.left > 0).then(|| Id::new(self.next + (self.left - 1) * self.step))
    }
}

impl Iterator for IdBatch {
    type Item = Id;

    #[inline]
    fn next(&mut self) -> Option<Id> {
        if self.left == 0 {
            return None;
        }
        let id = Id::new(self.next);
        self.left -= 1;
        self.next = self.next.wrapping_add(self.step);
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for IdBatch {}

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
        let (first, _) = self.advance(1)?;
        Ok(Id::new(self.raw_id(first)))
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
            return Ok(IdBatch {
                next: 0,
                left: 0,
                step: 0,
            });
        }
        let (first, count) = self.advance(n)?;
        Ok(IdBatch {
            next: self.raw_id(first),
            left: count,
            step: 1 << self.plan.seq_shift,
        })
    }

    /// Shrinks the stored mark to the last ID actually issued, so that a
    /// restart right after a clean shutdown does not wait out the rest of the
    /// reserved window. Consumes the generator: nothing can be issued after it.
    ///
    /// ```
    /// use snowflake::{FileMarkStore, Generator, Layout};
    ///
    /// let path = std::env::temp_dir().join(format!("snowflake-close-{}", std::process::id()));
    /// let generator = Generator::builder(Layout::twitter()).store(FileMarkStore::new(&path)).build()?;
    /// generator.next_id()?;
    /// generator.close()?;
    /// let again = Generator::builder(Layout::twitter()).store(FileMarkStore::new(&path)).build()?;
    /// again.next_id()?;
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn close(self) -> Result<(), Error> {
        if let Some(reserve) = &self.reserve {
            let last = self.state.load(Ordering::Acquire) >> self.plan.seq_bits;
            reserve.store.save(self.mark_ms_of(last))?;
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
        let last = self.state.load(Ordering::Acquire) >> self.plan.seq_bits;
        let now = self.units(self.clock.now_ms())?;
        match self.behind(now, last) {
            Some((_, Some(err))) => Err(err),
            _ => Ok(()),
        }
    }

    /// A snapshot of what the generator has done.
    pub fn stats(&self) -> GeneratorStats {
        let c = &self.counters;
        let state = self.state.load(Ordering::Relaxed);
        let last = state >> self.plan.seq_bits;
        let now = self.units(self.clock.now_ms()).unwrap_or(last);
        GeneratorStats {
            issued: c
                .retired
                .load(Ordering::Relaxed)
                .wrapping_add((state & self.plan.seq_max) + 1),
            exhaustion_waits: c.exhaustion_waits.load(Ordering::Relaxed),
            clock_backwards: c.clock_backwards.load(Ordering::Relaxed),
            clock_backwards_max_ms: c.clock_backwards_max_ms.load(Ordering::Relaxed),
            // Only the lead the policy allows; a clock that stepped back is
            // counted in `clock_backwards`, not here.
            lead_ms: last.saturating_sub(now).min(self.plan.lead_units) * self.plan.tick_ms,
            lead_issues: c.lead_issues.load(Ordering::Relaxed),
            mark_writes: c.mark_writes.load(Ordering::Relaxed),
            mark_ms: self
                .reserve
                .as_ref()
                .map(|r| self.mark_ms_of(r.reserved.load(Ordering::Relaxed))),
        }
    }

    #[inline]
    fn raw_id(&self, packed: u64) -> u64 {
        let p = &self.plan;
        let unit = packed >> p.seq_bits;
        let seq = packed & p.seq_max;
        (unit << p.time_shift) | (seq << p.seq_shift) | p.node_bits
    }

    /// Time units since the epoch for a clock reading.
    #[inline]
    fn units(&self, now_ms: i64) -> Result<u64, Error> {
        let p = &self.plan;
        if now_ms < p.epoch_ms {
            return Err(Error::new(Repr::BeforeEpoch {
                timestamp: now_ms,
                epoch: p.epoch_ms,
            }));
        }
        let since = now_ms.abs_diff(p.epoch_ms);
        let units = if p.tick_ms == 1 {
            since
        } else {
            since / p.tick_ms
        };
        if units > p.max_units {
            return Err(Error::new(Repr::TimeExhausted {
                last: self.layout.last_timestamp_ms(),
            }));
        }
        Ok(units)
    }

    /// How far the clock is behind the last issued time beyond any allowed
    /// lead, in ms, and the error if that is beyond the tolerance.
    fn behind(&self, now: u64, last: u64) -> Option<(u64, Option<Error>)> {
        let p = &self.plan;
        if last <= now + p.lead_units {
            return None;
        }
        let behind_ms = (last - now) * p.tick_ms;
        let err = (last - now > p.tolerance_units + p.lead_units).then(|| {
            Error::new(Repr::ClockBackwards {
                by_ms: behind_ms,
                tolerance_ms: p.tolerance_ms,
            })
        });
        Some((behind_ms, err))
    }

    /// Counts a step back of the clock, once per call however often the
    /// call loops; fails if it is beyond the tolerance.
    fn check_behind(&self, now: u64, last: u64, counted: &mut bool) -> Result<(), Error> {
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

    /// Claims up to `want` sequence numbers; returns the first packed pair and
    /// how many were claimed. All waiting happens outside the CAS.
    #[inline]
    fn advance(&self, want: u64) -> Result<(u64, u64), Error> {
        let p = self.plan;
        let mut waited = false;
        let mut counted = false;
        loop {
            // The state is read before the clock, never after: a thread
            // descheduled between the two then sees a clock that is late,
            // which is harmless, instead of one that looks like it went
            // backwards past the tolerance.
            let current = self.state.load(Ordering::Acquire);
            let now = self.units(self.clock.now_ms())?;
            let last = current >> p.seq_bits;
            let seq = current & p.seq_max;
            let (first, count) = if now > last {
                (now << p.seq_bits, want.min(p.seq_max + 1))
            } else {
                if last > now {
                    self.check_behind(now, last, &mut counted)?;
                }
                if seq < p.seq_max {
                    (current + 1, want.min(p.seq_max - seq))
                } else if last < now + p.lead_units && last < p.max_units {
                    self.counters.lead_issues.fetch_add(1, Ordering::Relaxed);
                    ((last + 1) << p.seq_bits, want.min(p.seq_max + 1))
                } else {
                    if last >= p.max_units {
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
            if let Some(reserve) = &self.reserve {
                self.ensure_reserved(reserve, first >> p.seq_bits)?;
            }
            let claimed = first + count - 1;
            if self
                .state
                .compare_exchange_weak(current, claimed, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                if first >> p.seq_bits != last {
                    self.counters.retired.fetch_add(seq + 1, Ordering::Relaxed);
                }
                return Ok((first, count));
            }
        }
    }

    /// The mark stored for a reserved unit: the last millisecond of that unit.
    fn mark_ms_of(&self, unit: u64) -> i64 {
        self.layout.timestamp_ms(unit) + (self.plan.tick_ms - 1) as i64
    }

    /// Makes sure `unit` is covered by a durable mark before any ID in it is
    /// published. Tops the mark up early, when half the window is used, by
    /// whichever thread gets the lock first, so callers rarely wait on disk.
    fn ensure_reserved(&self, reserve: &Reserve, unit: u64) -> Result<(), Error> {
        let reserved = reserve.reserved.load(Ordering::Acquire);
        if unit <= reserved {
            if unit + reserve.window_units / 2 > reserved
                && let Ok(_guard) = reserve.lock.try_lock()
            {
                // Still within the mark: a failed early top-up is retried
                // by the next caller, and is an error only once needed.
                let _ = self.extend(reserve, unit);
            }
            return Ok(());
        }
        let _guard = reserve
            .lock
            .lock()
            .map_err(|_| Error::store("the mark lock was poisoned by a panic"))?;
        if unit <= reserve.reserved.load(Ordering::Acquire) {
            return Ok(());
        }
        self.extend(reserve, unit)
    }

    fn extend(&self, reserve: &Reserve, unit: u64) -> Result<(), Error> {
        let target = unit
            .saturating_add(reserve.window_units)
            .min(self.plan.max_units);
        if target <= reserve.reserved.load(Ordering::Acquire) {
            return Ok(());
        }
        reserve.store.save(self.mark_ms_of(target))?;
        reserve.reserved.fetch_max(target, Ordering::Release);
        self.counters.mark_writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl<C: Clock> core::fmt::Debug for GeneratorBuilder<'_, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GeneratorBuilder")
            .field("layout", &self.layout.name())
            .field("node", &self.node)
            .field("tolerance_ms", &self.tolerance_ms)
            .field("lead_ms", &self.lead_ms)
            .field("store", &self.store.is_some())
            .field("reserve_ms", &self.reserve_ms)
            .finish_non_exhaustive()
    }
}

impl<C: Clock> core::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Generator")
            .field("layout", &self.layout.name())
            .field("node_bits", &self.plan.node_bits)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Model checks of the compare-and-swap step: loom runs every interleaving of
/// the threads' atomic operations. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p snowflake --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::clock::ManualClock;
    use alloc::vec::Vec;
    use loom::sync::Arc;
    use loom::thread;

    /// Two IDs per time unit, so that threads also race through exhaustion
    /// and the move to the next unit.
    fn tiny() -> Arc<Generator<ManualClock>> {
        let layout = Layout::parse("time:62,sequence:1").unwrap();
        Arc::new(
            Generator::builder(layout)
                .clock(ManualClock::new(1))
                .build()
                .unwrap(),
        )
    }

    fn run(threads: usize, per_thread: usize) {
        loom::model(move || {
            let generator = tiny();
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let generator = generator.clone();
                    thread::spawn(move || {
                        let ids: Vec<u64> = (0..per_thread)
                            .map(|_| generator.next_id().unwrap().get())
                            .collect();
                        assert!(ids.windows(2).all(|w| w[0] < w[1]));
                        ids
                    })
                })
                .collect();
            let mut all: Vec<u64> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), threads * per_thread, "duplicate IDs");
            assert_eq!(generator.stats().issued, (threads * per_thread) as u64);
        });
    }

    #[test]
    fn loom_two_threads_two_ids_each() {
        run(2, 2);
    }

    #[test]
    fn loom_three_threads_one_id_each() {
        run(3, 1);
    }

    #[test]
    fn loom_batches_do_not_overlap() {
        loom::model(|| {
            let generator = tiny();
            let other = generator.clone();
            let handle = thread::spawn(move || other.next_ids(2).unwrap().collect::<Vec<_>>());
            let mine: Vec<_> = generator.next_ids(2).unwrap().collect();
            let theirs = handle.join().unwrap();
            for id in &mine {
                assert!(!theirs.contains(id));
            }
        });
    }
}

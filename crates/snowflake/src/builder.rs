//! Configuring a generator: its settings, their limits, and the start-up
//! wait for a clock that is behind the stored high-water mark.

use alloc::boxed::Box;
use alloc::string::ToString;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Repr};
use crate::generator::{Derived, Generator, SharedState};
use crate::layout::Layout;
use crate::reserve::{Reserve, stored_unit};
use crate::store::MarkStore;
use crate::sync::Ordering;

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
    /// assert_eq!(err.to_string(), "machine 32 is out of range: 0 to 31 (5 bits)");
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
            tolerance_ms: Generator::DEFAULT_TOLERANCE_MS,
            lead_ms: 0,
            store: None,
            reserve_ms: Generator::DEFAULT_RESERVE_MS,
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

    /// How far, in milliseconds, the clock may be behind the time of the last
    /// ID issued (beyond any lead) and be waited out (default 5 ms, at most
    /// [`Generator::MAX_TOLERANCE_MS`]); beyond it, calls fail with the size
    /// of the step in milliseconds. The bound is in milliseconds whatever the
    /// layout's tick: on a 10 ms tick, a 5 ms tolerance lets no ID carry a
    /// time more than 5 ms ahead of the clock.
    pub fn tolerance_ms(mut self, ms: u64) -> Self {
        self.tolerance_ms = ms;
        self
    }

    /// Lets the generator borrow time units from the future when the sequence
    /// is used up, as long as the borrowed unit's time is at most this many
    /// milliseconds ahead of the clock (default 0: never; at most
    /// [`Generator::MAX_LEAD_MS`]). On a 10 ms tick a lead below 10 ms can
    /// borrow only when the clock is that close to the next unit. The lead is
    /// reported in [`GeneratorStats::lead_ms`](crate::GeneratorStats::lead_ms).
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
        self.build_from(|_, _, _, _| Ok(0))
    }

    /// Builds a generator that issues from `shared` (see
    /// [`Generator::next_id_on`]) and sets `shared` to resume above `mark_ms`,
    /// the highest time its mark covered before a restart (`None`: nothing
    /// was issued): as [`build`](GeneratorBuilder::build) does with a
    /// store, it waits until the clock is past the mark if that is at most
    /// the tolerance plus the reserve window away, and fails otherwise; then
    /// the next ID from `shared` lies above every ID of the mark's time.
    /// Call it once, before any generator issues from `shared`; the
    /// generators of the other processes are built with `build`. A store
    /// given to the builder is not used.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use snowflake::{Generator, Layout, ManualClock, SharedState};
    ///
    /// let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    /// let shared = SharedState::new();
    /// let generator = Generator::builder(Layout::twitter())
    ///     .clock(clock.clone())
    ///     .resume(&shared, Some(1_700_000_000_000))?;
    /// let id = generator.next_id_on(&shared, &())?;
    /// assert!(Layout::twitter().decode(id)?.timestamp_ms() > 1_700_000_000_000);
    ///
    /// // A mark further ahead than the tolerance and the window is refused.
    /// let err = Generator::builder(Layout::twitter())
    ///     .clock(clock)
    ///     .resume(&SharedState::new(), Some(1_700_000_060_000))
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("59999 ms behind"), "{err}");
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn resume(
        mut self,
        shared: &SharedState,
        mark_ms: Option<i64>,
    ) -> Result<Generator<C>, Error> {
        self.store = None;
        let generator = self.build_from(|layout, clock, derived, window_units| {
            let mark_unit = resume_unit(&Given(mark_ms), layout, clock, derived, window_units)?;
            Ok(derived.state(mark_unit, derived.seq_max))
        })?;
        shared.0.store(generator.initial_state(), Ordering::Release);
        Ok(generator)
    }

    /// Checks the settings and builds the generator; `resumed` gives the
    /// state of a generator without a store of its own.
    fn build_from(
        self,
        resumed: impl FnOnce(&Layout, &C, &Derived, u64) -> Result<u64, Error>,
    ) -> Result<Generator<C>, Error> {
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
        check_setting(
            "tolerance_ms",
            self.tolerance_ms,
            Generator::MAX_TOLERANCE_MS,
        )?;
        check_setting("max_lead_ms", self.lead_ms, Generator::MAX_LEAD_MS)?;
        check_setting("reserve_ms", self.reserve_ms, Generator::MAX_RESERVE_MS)?;
        let derived = Derived::new(&layout, seq, node_bits, self.tolerance_ms, self.lead_ms);
        let window_units = (self.reserve_ms / layout.tick_ms()).max(1);
        let (initial, reserve) = match self.store {
            None => (resumed(&layout, &self.clock, &derived, window_units)?, None),
            Some(store) => {
                let mark_unit = resume_unit(&*store, &layout, &self.clock, &derived, window_units)?;
                // Everything up to and including the mark's unit may have been
                // issued before the restart: start as if it was all used.
                let initial = derived.state(mark_unit, derived.seq_max);
                let reserve = Reserve::new(store, &layout, mark_unit, window_units);
                (initial, Some(reserve))
            }
        };
        Ok(Generator::from_parts(
            layout, self.clock, derived, reserve, initial,
        ))
    }
}

/// Reads the mark in `store` and waits until the clock is past it, if that
/// is at most the tolerance plus the reserve window away; returns the
/// mark's time unit.
fn resume_unit<C: Clock>(
    store: &dyn MarkStore,
    layout: &Layout,
    clock: &C,
    derived: &Derived,
    window_units: u64,
) -> Result<u64, Error> {
    store.open(layout)?;
    let mark_unit = stored_unit(store, layout)?;
    // The mark runs up to a window ahead of the last ID issued
    // (less after a clean `close`), so a quick restart finds it
    // ahead of the clock: wait that out, but no more.
    let tick = layout.tick_ms();
    let allowance_ms = derived.tolerance_ms + window_units * tick;
    // The IDs of the mark's unit carry its start time.
    let mark_ms = layout.timestamp_ms(mark_unit);
    loop {
        let now_ms = clock.now_ms();
        let now = layout.time_units(now_ms)?;
        if now > mark_unit {
            break;
        }
        if mark_ms.saturating_sub(now_ms).max(0) as u64 > allowance_ms {
            return Err(Error::new(Repr::MarkAhead {
                mark_ms,
                now_ms,
                tolerance_ms: allowance_ms,
            }));
        }
        clock.wait_toward(layout.timestamp_ms(mark_unit + 1));
    }
    // Nobody else may have moved the mark while it was waited
    // out: then another process is issuing from the same store.
    store.confirm()?;
    Ok(mark_unit)
}

/// A mark read elsewhere, handed to [`resume_unit`] as a store.
struct Given(Option<i64>);

impl MarkStore for Given {
    fn load(&self) -> Result<Option<i64>, Error> {
        Ok(self.0)
    }

    fn save(&self, _mark_ms: i64) -> Result<(), Error> {
        Ok(())
    }
}

fn check_setting(field: &'static str, value: u64, max: u64) -> Result<(), Error> {
    if value > max {
        return Err(Error::new(Repr::InvalidSetting {
            field,
            value: value.to_string(),
            allowed: match field {
                "max_lead_ms" => "the lead is at most 1000 ms (Generator::MAX_LEAD_MS)",
                "reserve_ms" => "the reserve is at most 60000 ms (Generator::MAX_RESERVE_MS)",
                _ => "the tolerance is at most 60000 ms (Generator::MAX_TOLERANCE_MS)",
            },
        }));
    }
    Ok(())
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

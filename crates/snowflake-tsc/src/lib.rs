//! A wall clock for [`snowflake`] generators that reads the CPU's time-stamp
//! counter on most calls and the system clock once a millisecond.
//!
//! [`SystemClock`] asks the kernel for the time on every call (through the
//! vDSO: most of the cost of an honest `next_id`; BENCHMARKS.md has the
//! figures). [`TscClock`] reads
//! the counter instead (`rdtsc` through the [`quanta`] crate, calibrated to
//! nanoseconds) and turns it into wall-clock milliseconds with an offset
//! taken from the system clock. Whenever that estimate reaches a millisecond
//! other than the one last confirmed, it reads the system clock again, uses
//! *that* reading, and takes a fresh offset. So:
//!
//! - every value it returns is a reading of the system clock taken at most
//!   one millisecond *of the counter* earlier, within the millisecond the
//!   counter is in now; while the counter and the wall clock agree, that is
//!   the wall clock's millisecond, as with `SystemClock`;
//! - drift between the two (NTP slewing the wall clock, a counter a few ppm
//!   off) is corrected at every new millisecond, so it never builds up: a
//!   counter that runs slow can return the previous millisecond for a
//!   moment, one that runs fast only checks earlier;
//! - a step of the wall clock, back or forward, is seen when the counter
//!   reaches its next millisecond, so **up to a millisecond late** rather
//!   than at the next call: after a step back the generator may go on for
//!   up to a millisecond issuing IDs of the millisecond it had reached
//!   (above every earlier ID, so harmless, but ahead of the new wall clock
//!   by the size of the step); after a step forward, IDs may lag the new
//!   wall clock by up to about two milliseconds for that moment;
//! - if the counter stops while the system clock goes on (a suspended
//!   machine or a paused VM, or the monotonic fallback below across a
//!   suspend), the first call afterwards can return the millisecond from
//!   before the pause; the next millisecond of the counter corrects it.
//!
//! Those delays are the whole trade-off, and why this is a clock of its own
//! rather than the default: IDs stay unique and increasing, and a clock set
//! back is still detected, but a step or a pause is seen up to a
//! millisecond of the counter later than with `SystemClock`.
//!
//! Where the CPU has no invariant counter, `quanta` falls back to the
//! monotonic clock, which costs about what `SystemClock` does: still
//! correct, no faster.
//!
//! ```
//! use snowflake::{Generator, Layout};
//! use snowflake_tsc::TscClock;
//!
//! let generator = Generator::builder(Layout::twitter())
//!     .node(&[("machine", 1)])
//!     .clock(TscClock::shared())
//!     .build()?;
//! assert!(generator.next_id()? < generator.next_id()?);
//! # Ok::<(), snowflake::Error>(())
//! ```
//!
//! [`SystemClock`]: snowflake::SystemClock

#![deny(missing_docs)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};

use snowflake::{Clock, SystemClock};

const NS_PER_MS: i64 = 1_000_000;

/// The wall clock from the time-stamp counter, confirmed by the system clock
/// once a millisecond. See the [crate documentation](crate) for what it
/// guarantees and what it trades.
#[derive(Debug)]
pub struct TscClock {
    counter: quanta::Clock,
    /// The counter's raw reading when this clock was made: the counter's
    /// nanoseconds are counted from here.
    base: u64,
    /// Wall-clock Unix nanoseconds less counter nanoseconds, as of the last
    /// check against the system clock.
    offset_ns: AtomicI64,
    /// The millisecond the system clock gave at that check: what every call
    /// returns until the counter leaves it.
    confirmed_ms: AtomicI64,
    /// The wall clock in Unix nanoseconds: the system's, or a test's.
    wall_ns: fn() -> i64,
}

impl TscClock {
    /// A clock on this CPU's counter, calibrated once for the process (the
    /// first calibration takes up to about 200 ms).
    ///
    /// ```
    /// use snowflake::{Clock, SystemClock};
    ///
    /// let clock = snowflake_tsc::TscClock::new();
    /// let (before, now) = (SystemClock.now_ms(), clock.now_ms());
    /// assert!(now >= before - 1 && now <= SystemClock.now_ms());
    /// ```
    pub fn new() -> Self {
        Self::with_parts(quanta::Clock::new(), system_wall_ns)
    }

    /// The process-wide clock, made on first use.
    ///
    /// ```
    /// let a = snowflake_tsc::TscClock::shared();
    /// assert!(std::ptr::eq(a, snowflake_tsc::TscClock::shared()));
    /// ```
    pub fn shared() -> &'static TscClock {
        static SHARED: OnceLock<TscClock> = OnceLock::new();
        SHARED.get_or_init(TscClock::new)
    }

    /// A clock on the given counter and wall clock: the seam for tests,
    /// which drive both by hand.
    fn with_parts(counter: quanta::Clock, wall_ns: fn() -> i64) -> Self {
        let base = counter.raw();
        let clock = TscClock {
            counter,
            base,
            offset_ns: AtomicI64::new(0),
            confirmed_ms: AtomicI64::new(i64::MIN),
            wall_ns,
        };
        clock.confirm(clock.counter_ns());
        clock
    }

    /// Nanoseconds of the counter since this clock was made.
    #[inline]
    fn counter_ns(&self) -> i64 {
        let ns = self.counter.delta_as_nanos(self.base, self.counter.raw());
        // 2^63 ns is 292 years of uptime.
        i64::try_from(ns).unwrap_or(i64::MAX)
    }

    /// Reads the system clock, takes its millisecond as confirmed and a new
    /// offset from it. The counter is read before the wall clock, so a
    /// delay between the two makes the offset too large, never too small:
    /// the estimate then reaches the next millisecond early and checks
    /// again, rather than late.
    #[cold]
    fn confirm(&self, counter_ns: i64) -> i64 {
        let wall_ns = (self.wall_ns)();
        self.offset_ns
            .store(wall_ns.saturating_sub(counter_ns), Relaxed);
        let ms = wall_ns.div_euclid(NS_PER_MS);
        self.confirmed_ms.store(ms, Relaxed);
        ms
    }
}

impl Default for TscClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TscClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        let counter_ns = self.counter_ns();
        let estimate_ns = counter_ns.saturating_add(self.offset_ns.load(Relaxed));
        let confirmed = self.confirmed_ms.load(Relaxed);
        // Whether the estimate lies in the confirmed millisecond, by a
        // multiplication and one comparison rather than a division (the
        // product fits until the year 2262, as i64 nanoseconds do).
        let into_ns = estimate_ns.wrapping_sub(confirmed.wrapping_mul(NS_PER_MS));
        if (into_ns as u64) < NS_PER_MS as u64 {
            return confirmed;
        }
        self.confirm(counter_ns)
    }

    fn wait_toward(&self, target_ms: i64) {
        // The system clock's wait (nap, then spin the last stretch); the
        // generator's next `now_ms` then finds a new millisecond and checks.
        SystemClock.wait_toward(target_ms);
    }
}

/// The system clock in Unix nanoseconds, through the core's one reader.
fn system_wall_ns() -> i64 {
    saturate(SystemClock.now_ns())
}

/// Nanoseconds in an i64, which spans the years 1677 to 2262: a time
/// outside them is held at the nearer end.
fn saturate(ns: i128) -> i64 {
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::{Arc, Mutex, MutexGuard};

    /// A wall clock the test sets, and how often it was read. One test at a
    /// time uses it (the clock takes a plain `fn`).
    static WALL_NS: AtomicI64 = AtomicI64::new(0);
    static WALL_READS: AtomicU64 = AtomicU64::new(0);
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    fn test_wall() -> i64 {
        WALL_READS.fetch_add(1, Relaxed);
        WALL_NS.load(Relaxed)
    }

    struct Rig {
        clock: TscClock,
        counter: Arc<quanta::Mock>,
        _one: MutexGuard<'static, ()>,
    }

    impl Rig {
        /// Counter and wall clock both at `wall_ns`'s time.
        fn at(wall_ns: i64) -> Rig {
            let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
            WALL_NS.store(wall_ns, Relaxed);
            let (counter, mock) = quanta::Clock::mock();
            // Start the mock counter away from 0, as a real counter is.
            mock.increment(1_000u64);
            let clock = TscClock::with_parts(counter, test_wall);
            Rig {
                clock,
                counter: mock,
                _one: one,
            }
        }

        /// Both clocks move on by `ns`, as real time passing does.
        fn pass(&self, ns: u64) {
            self.counter.increment(ns);
            WALL_NS.fetch_add(ns as i64, Relaxed);
        }

        fn reads(&self) -> u64 {
            WALL_READS.load(Relaxed)
        }
    }

    const T: i64 = 1_700_000_000_000 * NS_PER_MS;

    #[test]
    fn within_a_millisecond_the_system_clock_is_not_read() {
        let rig = Rig::at(T + 100_000);
        let reads = rig.reads();
        for _ in 0..8 {
            assert_eq!(rig.clock.now_ms(), T / NS_PER_MS);
            rig.pass(100_000);
        }
        // 0.1 ms + 8 × 0.1 ms: still the first millisecond, no read.
        assert_eq!(rig.reads(), reads);
        rig.pass(200_000);
        assert_eq!(rig.clock.now_ms(), T / NS_PER_MS + 1);
        assert_eq!(rig.reads(), reads + 1, "one read for the new millisecond");
    }

    #[test]
    fn it_gives_the_wall_clocks_millisecond_at_every_step() {
        let rig = Rig::at(T);
        let mut step = 0u64;
        for _ in 0..2_000 {
            // Steps of 1 to 997 µs, so that every offset within a
            // millisecond is met.
            step = (step + 7_919) % 997_000 + 1_000;
            rig.pass(step);
            let wall_ms = WALL_NS.load(Relaxed).div_euclid(NS_PER_MS);
            assert_eq!(rig.clock.now_ms(), wall_ms);
        }
    }

    #[test]
    fn a_step_back_is_seen_at_the_counters_next_millisecond() {
        let rig = Rig::at(T + 200_000);
        let start = T / NS_PER_MS;
        assert_eq!(rig.clock.now_ms(), start);
        // The wall clock is set back 10 s; the counter does not notice.
        WALL_NS.fetch_sub(10_000 * NS_PER_MS, Relaxed);
        rig.pass(500_000);
        assert_eq!(rig.clock.now_ms(), start, "same millisecond of the counter");
        // The counter reaches its next millisecond: the system clock is read.
        rig.pass(400_000);
        assert_eq!(rig.clock.now_ms(), start + 1 - 10_000);
    }

    #[test]
    fn a_step_forward_is_seen_at_the_counters_next_millisecond() {
        let rig = Rig::at(T);
        let start = T / NS_PER_MS;
        assert_eq!(rig.clock.now_ms(), start);
        WALL_NS.fetch_add(3_600_000 * NS_PER_MS, Relaxed);
        rig.pass(999_000);
        assert_eq!(rig.clock.now_ms(), start);
        rig.pass(1_000);
        assert_eq!(rig.clock.now_ms(), start + 1 + 3_600_000);
        // And from there on, the new time.
        rig.pass(1_500_000);
        assert_eq!(rig.clock.now_ms(), start + 2 + 3_600_000);
    }

    #[test]
    fn a_counter_that_runs_fast_never_puts_the_time_ahead() {
        let rig = Rig::at(T);
        for _ in 0..5_000 {
            // The counter gains 1 % on the wall clock.
            rig.counter.increment(101_000u64);
            WALL_NS.fetch_add(100_000, Relaxed);
            let wall_ms = WALL_NS.load(Relaxed).div_euclid(NS_PER_MS);
            assert_eq!(rig.clock.now_ms(), wall_ms);
        }
    }

    #[test]
    fn a_counter_that_runs_slow_is_corrected_every_millisecond() {
        let rig = Rig::at(T);
        let mut worst = 0;
        for _ in 0..5_000 {
            // The counter loses 1 % on the wall clock.
            rig.counter.increment(99_000u64);
            WALL_NS.fetch_add(100_000, Relaxed);
            let wall_ms = WALL_NS.load(Relaxed).div_euclid(NS_PER_MS);
            let got = rig.clock.now_ms();
            assert!(got <= wall_ms, "ahead: {got} > {wall_ms}");
            worst = worst.max(wall_ms - got);
        }
        // 1 % of a millisecond late at worst, so at most one millisecond
        // behind, however long it runs (500 ms here).
        assert!(worst <= 1, "{worst} ms behind");
    }

    #[test]
    fn wall_times_outside_i64_nanoseconds_are_held_at_the_nearer_end() {
        assert_eq!(saturate(-5), -5);
        assert_eq!(saturate(0), 0);
        assert_eq!(saturate(i128::from(i64::MIN) - 1), i64::MIN);
        assert_eq!(saturate(i128::from(i64::MAX) + 1), i64::MAX);
    }

    #[test]
    fn the_real_counter_agrees_with_the_system_clock() {
        let clock = TscClock::new();
        for _ in 0..100_000 {
            let before = SystemClock.now_ms();
            let got = clock.now_ms();
            let after = SystemClock.now_ms();
            assert!(got <= after, "{got} is ahead of the system clock's {after}");
            assert!(got >= before - 1, "{got} is more than 1 ms behind {before}");
        }
    }
}

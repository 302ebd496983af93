//! Every read of the wall clock in this crate goes through [`Clock`], so tests
//! can drive time by hand and servers can swap in a cheaper clock. Nothing
//! else calls `SystemTime::now()`.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::sync::{AtomicI64, Ordering};

/// A source of wall-clock time in Unix milliseconds.
///
/// ```
/// use snowflake::{Clock, SystemClock};
///
/// let now = SystemClock.now_ms();
/// assert!(now > 1_700_000_000_000);
/// ```
pub trait Clock: Send + Sync {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> i64;

    /// Waits a short while for the clock to reach `target_ms`, then returns,
    /// reached or not: the caller reads the clock again and decides, so that a
    /// clock that jumps while it waits is noticed. The default spins once and
    /// yields the thread.
    fn wait_toward(&self, target_ms: i64) {
        let _ = target_ms;
        std::hint::spin_loop();
        std::thread::yield_now();
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        (**self).wait_toward(target_ms)
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        (**self).wait_toward(target_ms)
    }
}

fn system_now_ns() -> i128 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

/// How much earlier than the target a nap is set to end, beyond how late
/// naps have lately been ending: the spin that follows covers the rest.
const SPIN_GUARD_NS: u64 = 20_000;

/// The most a late nap counts for. Later than this it was the scheduler
/// (another thread had the core), not the timer: no spin margin makes up for
/// that, and a margin grown to match would only burn the core.
const MAX_LATE_NS: u64 = 150_000;

/// The longest nap, so that a clock that jumped forward or back while we
/// slept is looked at again soon.
const MAX_NAP_NS: u64 = 5_000_000;

/// How late naps have been ending lately, in nanoseconds: a maximum that
/// decays by an eighth at every nap, shared by every waiting thread, since
/// they sleep on the same machine and timers. It starts at Linux's default
/// timer slack (a sleep may end up to 50 µs after its deadline, so that the
/// kernel can fire timers together) plus a wake-up, and then follows the
/// machine: where the slack is 1 ns (`prctl(PR_SET_TIMERSLACK)`, or a write
/// to `/proc/self/timerslack_ns` before threads start) it falls to a few µs,
/// and the spin, the CPU cost of waiting, with it.
///
/// A plain std atomic even under loom: it tunes how long a wait spins and no
/// guarantee rests on it, since a wait always ends on a reading of the clock.
static NAP_LATE_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100_000);

/// Sleeps until just before `target_ms`, then spins, yielding now and then.
/// Sleeping most of the gap keeps a saturated generator at a fraction of a
/// core instead of burning one while it waits for the next millisecond;
/// spinning the last stretch, as long as naps have lately been overshooting,
/// keeps the first ID of a millisecond from waiting on the timer.
///
/// `std` has no absolute-deadline sleep on stable Rust (`sleep_until` is
/// unstable), and none is needed: the nap is computed from a reading taken
/// just before it, so the two differ only if the thread is preempted in
/// between, which a spin margin cannot make up for either.
fn wait_on_system_clock(target_ms: i64) -> i64 {
    use std::sync::atomic::Ordering::Relaxed;
    let target_ns = i128::from(target_ms) * 1_000_000;
    let mut spins = 0u32;
    loop {
        let left = target_ns - system_now_ns();
        if left <= 0 {
            return system_now_ms();
        }
        let margin = NAP_LATE_NS.load(Relaxed) + SPIN_GUARD_NS;
        if left > i128::from(margin) {
            let nap = (left - i128::from(margin)).min(i128::from(MAX_NAP_NS));
            let nap = Duration::from_nanos(nap as u64);
            let slept_from = Instant::now();
            std::thread::sleep(nap);
            let late = slept_from.elapsed().saturating_sub(nap);
            // Threads racing here may lose one another's update: harmless
            // for an estimate that every nap refreshes.
            let estimate = next_late_estimate(NAP_LATE_NS.load(Relaxed), late);
            NAP_LATE_NS.store(estimate, Relaxed);
            return system_now_ms();
        }
        std::hint::spin_loop();
        spins += 1;
        if spins.is_multiple_of(64) {
            std::thread::yield_now();
        }
        if spins > 1 << 20 {
            return system_now_ms();
        }
    }
}

/// The lateness estimate after a nap that ended `late`: the later of the
/// two, with the old one decayed by an eighth, so that one late nap widens
/// the spin for a few milliseconds rather than for good.
fn next_late_estimate(estimate: u64, late: Duration) -> u64 {
    let late = u64::try_from(late.as_nanos()).map_or(MAX_LATE_NS, |ns| ns.min(MAX_LATE_NS));
    late.max(estimate - estimate / 8)
}

/// The operating system's wall clock, read on every call (about 25 ns here).
///
/// ```
/// use snowflake::{Clock, SystemClock};
/// assert!(SystemClock.now_ms() > 0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

/// Unix milliseconds of the wall clock now.
#[inline]
fn system_now_ms() -> i64 {
    millisecond_of(SystemTime::now())
}

/// The millisecond this thread last looked up, as the instants where it
/// begins and ends. A reading inside it maps to it with two comparisons;
/// turning a reading into milliseconds otherwise costs a checked subtraction
/// of timespecs and a conversion, more than the clock read itself. Per
/// thread, so that it needs no atomics and no thread waits on another.
#[derive(Clone, Copy)]
struct Millisecond {
    from: SystemTime,
    until: SystemTime,
    ms: i64,
}

std::thread_local! {
    // Empty until first used: no reading falls inside it.
    static LAST_MS: Cell<Millisecond> = const {
        Cell::new(Millisecond { from: UNIX_EPOCH, until: UNIX_EPOCH, ms: 0 })
    };
}

/// The Unix millisecond a reading falls in, exactly as a subtraction from
/// the epoch would give it, for readings before, inside and after the one
/// remembered alike: so a clock that was set back is seen at once.
#[inline]
fn millisecond_of(now: SystemTime) -> i64 {
    let last = LAST_MS.with(Cell::get);
    if last.from <= now && now < last.until {
        return last.ms;
    }
    look_up_millisecond(now)
}

// Out of line: it runs about once a millisecond a thread, and left inline
// it would crowd the path that runs on every other call.
#[inline(never)]
fn look_up_millisecond(now: SystemTime) -> i64 {
    let ms = match now.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64 * 1000 + i64::from(d.subsec_millis()),
        Err(before) => {
            let d = before.duration();
            // Floor, not truncate: 1 ns before the epoch is millisecond -1.
            -(d.as_secs() as i64 * 1000) - i64::from(d.subsec_nanos().div_ceil(1_000_000))
        }
    };
    // Readings before 1970 are not remembered: no real clock gives them
    // twice in a row.
    let from = u64::try_from(ms)
        .ok()
        .and_then(|ms| UNIX_EPOCH.checked_add(Duration::from_millis(ms)));
    if let Some(from) = from
        && let Some(until) = from.checked_add(Duration::from_millis(1))
    {
        LAST_MS.with(|last| last.set(Millisecond { from, until, ms }));
    }
    ms
}

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        system_now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        wait_on_system_clock(target_ms);
    }
}

/// The wall clock read from a value that a background thread refreshes every
/// 100 µs, so reading it costs an atomic load instead of a system call.
///
/// It is for generators on the hot path of a server: an ID's time is at most
/// the refresh period (plus scheduling delay) behind the wall clock. When a
/// generator waits for the next millisecond it reads the real clock and
/// brings the cached value forward, so a saturated generator loses no time.
/// One thread serves the whole process, started on first use.
///
/// ```
/// use snowflake::{CachedClock, Clock, SystemClock};
///
/// let cached = CachedClock::shared();
/// assert!((cached.now_ms() - SystemClock.now_ms()).abs() < 1_000);
/// ```
#[derive(Debug)]
pub struct CachedClock {
    now_ms: AtomicI64,
}

impl CachedClock {
    /// How often the shared cached clock is refreshed.
    ///
    /// ```
    /// assert_eq!(snowflake::CachedClock::PERIOD.as_micros(), 100);
    /// ```
    pub const PERIOD: Duration = Duration::from_micros(100);

    /// The process-wide cached clock.
    pub fn shared() -> &'static CachedClock {
        static SHARED: OnceLock<&'static CachedClock> = OnceLock::new();
        SHARED.get_or_init(|| {
            let clock: &'static CachedClock = Box::leak(Box::new(CachedClock {
                now_ms: AtomicI64::new(SystemClock.now_ms()),
            }));
            let spawned = std::thread::Builder::new()
                .name("snowflake-clock".into())
                .spawn(move || {
                    loop {
                        clock.refresh();
                        std::thread::sleep(CachedClock::PERIOD);
                    }
                });
            // Without the thread, every read falls back to the system clock.
            if spawned.is_err() {
                clock.now_ms.store(i64::MIN, Ordering::Relaxed);
            }
            clock
        })
    }

    fn refresh(&self) -> i64 {
        let now = SystemClock.now_ms();
        // A waiting generator may have moved the value a little past this
        // reading: keep the later one. A real step back of the wall clock
        // (more than a millisecond) is passed on as it is: hiding it would
        // only move the problem to the generator's tolerance check.
        let cached = self.now_ms.load(Ordering::Relaxed);
        if now >= cached || cached - now > 1 {
            self.now_ms.store(now, Ordering::Relaxed);
        }
        now
    }
}

impl Clock for CachedClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        let cached = self.now_ms.load(Ordering::Relaxed);
        if cached == i64::MIN {
            return SystemClock.now_ms();
        }
        cached
    }

    fn wait_toward(&self, target_ms: i64) {
        let now = wait_on_system_clock(target_ms);
        if now >= target_ms {
            self.now_ms.fetch_max(now, Ordering::Relaxed);
        }
    }
}

/// A clock that moves only when told, for tests: step it forward, set it
/// back, or hold it still. When a generator waits on it for a later time,
/// the clock jumps to that time, as if the wait had passed.
///
/// ```
/// use snowflake::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// clock.advance(5);
/// assert_eq!(clock.now_ms(), 1_005);
/// clock.set(900);
/// assert_eq!(clock.now_ms(), 900);
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock that reads `now_ms` until moved.
    pub fn new(now_ms: i64) -> Self {
        ManualClock {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    /// Sets the time, forward or back.
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward (or back, for a negative step).
    pub fn advance(&self, ms: i64) {
        self.now_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }

    fn wait_toward(&self, target_ms: i64) {
        self.now_ms.fetch_max(target_ms, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_ms_agrees_with_the_nanosecond_reading() {
        for _ in 0..1000 {
            let before = system_now_ns().div_euclid(1_000_000) as i64;
            let ms = system_now_ms();
            let after = system_now_ns().div_euclid(1_000_000) as i64;
            assert!(before <= ms && ms <= after, "{before} {ms} {after}");
        }
    }

    #[test]
    fn a_reading_maps_to_its_millisecond_inside_beside_and_before_the_remembered_one() {
        let at = |ns: u64| UNIX_EPOCH + Duration::from_nanos(ns);
        let exact = |t: SystemTime| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => (d.as_nanos() / 1_000_000) as i64,
            Err(e) => -(e.duration().as_nanos().div_ceil(1_000_000) as i64),
        };
        let base = 1_700_000_000_123_000_000;
        let readings = [
            at(base + 500_000),
            at(base + 999_999),
            at(base + 1_000_000),
            at(base),
            at(base - 1),
            at(base + 250_000),
            at(base - 86_400_000_000_000),
            UNIX_EPOCH,
            UNIX_EPOCH - Duration::from_nanos(1),
            UNIX_EPOCH - Duration::from_millis(3),
            at(base + 999_999),
        ];
        for reading in readings {
            assert_eq!(millisecond_of(reading), exact(reading), "{reading:?}");
            // Asked again, it is answered from what the thread remembers.
            assert_eq!(millisecond_of(reading), exact(reading), "{reading:?}");
        }
        assert_eq!(millisecond_of(at(base + 1)), 1_700_000_000_123);
        assert_eq!(millisecond_of(at(base - 1)), 1_700_000_000_122);
    }

    #[test]
    fn the_late_estimate_follows_late_naps_up_and_decays_by_an_eighth() {
        let us = Duration::from_micros;
        assert_eq!(next_late_estimate(80_000, us(90)), 90_000);
        assert_eq!(next_late_estimate(80_000, us(5)), 70_000);
        let mut estimate = 100_000;
        for _ in 0..40 {
            estimate = next_late_estimate(estimate, us(3));
        }
        assert_eq!(estimate, 3_000, "settles on what naps really overshoot");
    }

    #[test]
    fn a_nap_late_by_the_scheduler_counts_only_up_to_the_cap() {
        assert_eq!(
            next_late_estimate(0, Duration::from_millis(30)),
            MAX_LATE_NS
        );
        assert_eq!(next_late_estimate(0, Duration::MAX), MAX_LATE_NS);
    }

    #[test]
    fn waiting_on_the_system_clock_ends_once_it_reaches_the_target() {
        let target = system_now_ms() + 3;
        let mut rounds = 0;
        // Each call returns after a nap or a spin, reached or not, as
        // `Clock::wait_toward` allows; a few calls reach a near target.
        while wait_on_system_clock(target) < target {
            rounds += 1;
            assert!(rounds < 10_000, "never reached {target}");
        }
        assert!(system_now_ms() >= target);
        let estimate = NAP_LATE_NS.load(std::sync::atomic::Ordering::Relaxed);
        assert!(estimate <= MAX_LATE_NS, "{estimate}");
    }
}

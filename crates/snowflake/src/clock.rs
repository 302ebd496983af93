//! Every read of the wall clock in this crate goes through [`Clock`], so tests
//! can drive time by hand and servers can swap in a cheaper clock. Nothing
//! else calls `SystemTime::now()`.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::sync::{AtomicBool, AtomicI64, Ordering};

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
    unix_ns(SystemTime::now())
}

/// Nanoseconds since the Unix epoch, negative before it.
fn unix_ns(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

/// From `ns` (Unix nanoseconds) to the start of the next millisecond: never
/// zero, so a reading on a boundary sleeps a whole millisecond.
fn until_next_millisecond(ns: i128) -> Duration {
    let into = ns.rem_euclid(1_000_000) as u64;
    Duration::from_nanos(1_000_000 - into)
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
/// machine: where the slack is smaller (`prctl(PR_SET_TIMERSLACK)`, or a
/// write to `/proc/self/timerslack_ns` before threads start) it falls, and
/// the spin, the CPU cost of waiting, with it.
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

/// The operating system's wall clock, read on every call (its cost per call
/// is in BENCHMARKS.md, beside the other clocks').
///
/// ```
/// use snowflake::{Clock, SystemClock};
/// assert!(SystemClock.now_ms() > 0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl SystemClock {
    /// Nanoseconds since 1970-01-01T00:00:00Z, negative before: for a clock
    /// built on another time source that anchors itself to the wall clock
    /// finer than a millisecond (as `snowflake-tsc` does), so that the
    /// system's clock is still read in one place.
    ///
    /// ```
    /// use snowflake::{Clock, SystemClock};
    /// let ns = SystemClock.now_ns();
    /// assert!(ns / 1_000_000 <= i128::from(SystemClock.now_ms()));
    /// ```
    pub fn now_ns(&self) -> i128 {
        system_now_ns()
    }
}

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
    let ms = unix_ms(now);
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

/// Milliseconds since the Unix epoch, floored: negative before it.
#[inline]
fn unix_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64 * 1000 + i64::from(d.subsec_millis()),
        Err(before) => {
            let d = before.duration();
            // Floor, not truncate: 1 ns before the epoch is millisecond -1.
            -(d.as_secs() as i64 * 1000) - i64::from(d.subsec_nanos().div_ceil(1_000_000))
        }
    }
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

/// The wall clock read from a value that a background thread refreshes as
/// each millisecond begins, so reading it costs an atomic load instead of a
/// system call.
///
/// It is for generators on the hot path of a server: an ID's time lags the
/// wall clock by as long as the refresher takes to wake after a millisecond
/// begins (the timer's lateness: tens of microseconds, more on a busy
/// host). When a
/// generator waits for the next millisecond it reads the real clock and
/// brings the cached value forward, so a saturated generator loses no time.
/// One thread serves the whole process, started on first use.
///
/// The cached value only ever moves forward: the refresher and waiting
/// generators both raise it with `fetch_max`, so neither can undo the
/// other's newer reading. The price is that a step back of the wall clock is
/// not passed on: the cached clock holds still until the wall clock is past
/// it again, and a generator on it waits rather than fails. Use
/// [`SystemClock`] where a step back must be reported.
///
/// If the refresher thread cannot be started, every read goes to the system
/// clock (still never below an earlier read).
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
    /// Whether a thread keeps `now_ms` fresh; without one, reads go to the
    /// system clock. Kept apart from the value, so that no write of the value
    /// can turn the fallback off.
    refreshed: AtomicBool,
}

impl CachedClock {
    /// How often the shared cached clock is refreshed: once a millisecond,
    /// just after it begins. The value only changes when a millisecond
    /// begins, so a refresher that woke more often would spend more CPU
    /// without being any closer to the wall clock.
    ///
    /// ```
    /// assert_eq!(snowflake::CachedClock::PERIOD.as_micros(), 1_000);
    /// ```
    pub const PERIOD: Duration = Duration::from_millis(1);

    fn new(refreshed: bool) -> Self {
        CachedClock {
            now_ms: AtomicI64::new(SystemClock.now_ms()),
            refreshed: AtomicBool::new(refreshed),
        }
    }

    /// The process-wide cached clock.
    pub fn shared() -> &'static CachedClock {
        static SHARED: OnceLock<&'static CachedClock> = OnceLock::new();
        SHARED.get_or_init(|| {
            let clock: &'static CachedClock = Box::leak(Box::new(CachedClock::new(true)));
            let spawned = std::thread::Builder::new()
                .name("snowflake-clock".into())
                .spawn(move || {
                    loop {
                        let ns = system_now_ns();
                        clock.refresh(ns.div_euclid(1_000_000) as i64);
                        std::thread::sleep(until_next_millisecond(ns));
                    }
                });
            if spawned.is_err() {
                clock.refreshed.store(false, Ordering::Relaxed);
            }
            clock
        })
    }

    /// Brings the cached value up to `now_ms`, never down.
    fn refresh(&self, now_ms: i64) -> i64 {
        self.now_ms.fetch_max(now_ms, Ordering::Relaxed).max(now_ms)
    }
}

impl Clock for CachedClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        if !self.refreshed.load(Ordering::Relaxed) {
            return self.refresh(SystemClock.now_ms());
        }
        self.now_ms.load(Ordering::Relaxed)
    }

    fn wait_toward(&self, target_ms: i64) {
        let now = wait_on_system_clock(target_ms);
        if now >= target_ms {
            self.refresh(now);
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

    /// Before 1970 both conversions floor: 1 ns before the epoch is
    /// millisecond -1, not 0.
    #[test]
    fn times_before_the_epoch_are_negative_and_floored() {
        let before = |ns: u64| UNIX_EPOCH - Duration::from_nanos(ns);
        assert_eq!(unix_ms(before(1)), -1);
        assert_eq!(unix_ms(before(1_000_000)), -1);
        assert_eq!(unix_ms(before(1_000_001)), -2);
        assert_eq!(unix_ms(before(2_500_000_000)), -2_500);
        assert_eq!(unix_ns(before(2_500_000_001)), -2_500_000_001);
        assert_eq!(
            unix_ms(UNIX_EPOCH + Duration::from_nanos(2_999_999_999)),
            2_999
        );
        assert_eq!(unix_ns(UNIX_EPOCH + Duration::from_nanos(7)), 7);
    }

    /// A target already reached costs one clock read, not a sleep: twenty
    /// such calls take far less than one 5 ms nap each.
    #[test]
    fn waiting_for_a_time_already_passed_returns_at_once() {
        let target = SystemClock.now_ms() - 1;
        let started = std::time::Instant::now();
        for _ in 0..20 {
            assert!(wait_on_system_clock(target) > target);
        }
        let took = started.elapsed();
        assert!(took < Duration::from_millis(50), "{took:?} for 20 calls");
    }

    /// A wait sleeps most of the gap: reaching a time a few milliseconds
    /// ahead takes a handful of calls, not a busy loop of thousands.
    #[test]
    fn waiting_on_the_system_clock_sleeps_most_of_the_gap() {
        let target = SystemClock.now_ms() + 4;
        let mut calls = 0;
        while SystemClock.now_ms() < target {
            SystemClock.wait_toward(target);
            calls += 1;
            assert!(calls <= 4, "{calls} calls to wait 4 ms");
        }
        // A target already passed returns at once, with the time now.
        let now = wait_on_system_clock(target - 1_000);
        assert!(now >= target);
    }

    /// A waiting generator may carry the value past the refresher's reading;
    /// the refresher's older (or stepped-back) reading must not undo it.
    #[test]
    fn cached_clock_never_moves_back() {
        let clock = CachedClock::new(true);
        let ahead = clock.now_ms() + 50;
        clock.refresh(ahead);
        for back in [1, 2, 5, 1_000] {
            assert_eq!(clock.refresh(ahead - back), ahead);
            assert_eq!(clock.now_ms(), ahead);
        }
        clock.refresh(ahead + 1);
        assert_eq!(clock.now_ms(), ahead + 1);
    }

    /// With no refresher running, only a wait moves the value: to the time
    /// it reached, which is at least the target.
    #[test]
    fn a_wait_brings_the_cached_value_forward() {
        let clock = CachedClock::new(true);
        let target = SystemClock.now_ms() + 2;
        while SystemClock.now_ms() < target {
            clock.wait_toward(target);
        }
        clock.wait_toward(target);
        assert!(clock.now_ms() >= target);
    }

    /// Refreshers and readers racing: every reader sees time only grow.
    #[test]
    fn cached_clock_reads_only_grow_under_races() {
        let clock = Arc::new(CachedClock::new(true));
        let base = clock.now_ms();
        let writers: Vec<_> = (0..3i64)
            .map(|w| {
                let clock = Arc::clone(&clock);
                std::thread::spawn(move || {
                    for i in 0..20_000i64 {
                        // Each writer lags the others by a few ms, as a
                        // refresher lags a waiting generator.
                        clock.refresh(base + i / 4 - w * 3);
                    }
                })
            })
            .collect();
        let mut last = i64::MIN;
        for _ in 0..50_000 {
            let now = clock.now_ms();
            assert!(now >= last, "went back from {last} to {now}");
            last = now;
        }
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(clock.now_ms(), base + 19_999 / 4);
    }

    /// Without its refresher thread the clock reads the system clock, also
    /// after a generator has waited on it (a wait must not stop it moving).
    #[test]
    fn cached_clock_without_a_refresher_follows_the_system_clock() {
        let clock = CachedClock::new(false);
        let target = SystemClock.now_ms() + 2;
        clock.wait_toward(target);
        clock.wait_toward(target);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(3));
            let system = SystemClock.now_ms();
            assert!(clock.now_ms() >= system, "stuck behind the system clock");
        }
        // Still never below an earlier reading.
        let ahead = SystemClock.now_ms() + 60_000;
        clock.refresh(ahead);
        assert_eq!(clock.now_ms(), ahead);
    }

    #[test]
    fn the_refresher_sleeps_to_the_next_millisecond() {
        let cases = [
            (0, 1_000_000),
            (1, 999_999),
            (999_999, 1),
            (1_000_000, 1_000_000),
            (1_785_012_345_678_901_234, 98_766),
            (-1, 1),
            (-999_999, 999_999),
            (-1_000_000, 1_000_000),
        ];
        for (ns, left) in cases {
            assert_eq!(
                until_next_millisecond(ns),
                Duration::from_nanos(left),
                "{ns}"
            );
            // It ends on a millisecond boundary.
            assert_eq!((ns + i128::from(left)).rem_euclid(1_000_000), 0, "{ns}");
        }
    }

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

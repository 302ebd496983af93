//! The generators under test, shared by the burst benchmark and the
//! throughput binary.
//!
//! Each peer is configured as close to Twitter's layout (41-bit millisecond
//! time, 10-bit node, 12-bit sequence) as it allows, and its [`Spec`] records
//! what its layout really is, so that every ratio is taken against that
//! generator's own ceiling and every ID's time is read back with that
//! generator's own epoch and time unit.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use snowflake::{CachedClock, Generator, Id, Layout, SystemClock};
use snowflake_tsc::TscClock;

/// Twitter's epoch, 2010-11-04T01:42:54.657Z, in Unix milliseconds.
pub const TWITTER_EPOCH_MS: i64 = 1_288_834_974_657;
/// Sonyflake's default start time, 2014-09-01T00:00:00Z, in Unix milliseconds.
pub const SONYFLAKE_EPOCH_MS: i64 = 1_409_529_600_000;
/// How many IDs one `next_ids` call asks for: a whole millisecond's sequence.
pub const BATCH: u64 = 4096;

/// What a generator's IDs look like, as configured here.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The name used on the command line and in the tables.
    pub name: &'static str,
    /// How it is set up, for the tables.
    pub setup: &'static str,
    /// Its layout as configured, most significant field first.
    pub layout: &'static str,
    /// Unix milliseconds of time 0.
    pub epoch_ms: i64,
    /// Milliseconds per time unit.
    pub unit_ms: i64,
    /// Where the time field starts.
    pub time_shift: u32,
    /// The most IDs one generator can issue in one time unit.
    pub ids_per_unit: u64,
}

impl Spec {
    /// The most IDs per second one generator can issue without running ahead
    /// of the clock.
    pub fn ceiling_per_s(&self) -> f64 {
        self.ids_per_unit as f64 * 1000.0 / self.unit_ms as f64
    }

    /// The Unix millisecond at which the time unit of `id` starts.
    pub fn time_ms(&self, id: u64) -> i64 {
        (id >> self.time_shift) as i64 * self.unit_ms + self.epoch_ms
    }
}

/// A generator shared by every thread of a throughput run.
pub trait Subject: Send + Sync + Sized + 'static {
    /// Its layout and ceiling.
    const SPEC: Spec;

    /// A fresh generator for node 0.
    fn build() -> Self;

    /// Appends at least one new ID to `out`, or says why it could not.
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String>;

    /// Anything the generator reports about itself after a run.
    fn report(&self) -> String {
        String::new()
    }
}

/// The wall clock in Unix nanoseconds, read the way `SystemClock` does.
#[inline]
pub fn wall_ns() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i64,
        Err(e) => -(e.duration().as_nanos() as i64),
    }
}

/// Twitter's epoch as the peers that take a `SystemTime` are given it.
fn twitter_epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(TWITTER_EPOCH_MS as u64)
}

/// Twitter's layout, which every subject but sonyflake has: the spec the
/// others name and describe themselves on.
const TWITTER_SPEC: Spec = Spec {
    name: "",
    setup: "",
    layout: "sign 1, time 41 (ms since Twitter epoch), datacenter 5, machine 5, sequence 12",
    epoch_ms: TWITTER_EPOCH_MS,
    unit_ms: 1,
    time_shift: 22,
    ids_per_unit: 4096,
};

fn ours_report<C: snowflake::Clock>(generator: &Generator<C>) -> String {
    let s = generator.stats();
    format!(
        "issued={} exhaustion_waits={} clock_backwards={} lead_issues={}",
        s.issued, s.exhaustion_waits, s.clock_backwards, s.lead_issues
    )
}

/// Ours on one clock: the same subject whatever the clock, named and
/// described by its arguments, and its generator made by the last.
macro_rules! ours_on_clock {
    ($(#[$doc:meta])* $subject:ident, $clock:ty, $name:literal, $setup:literal, $generator:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $subject(pub Generator<$clock>);

        impl $subject {
            /// The generator, on Twitter's layout.
            pub fn generator() -> Generator<$clock> {
                $generator.expect("twitter layout builds")
            }
        }

        impl Subject for $subject {
            const SPEC: Spec = Spec {
                name: $name,
                setup: $setup,
                ..TWITTER_SPEC
            };

            fn build() -> Self {
                $subject(Self::generator())
            }

            #[inline]
            fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
                out.push(self.0.next_id().map_err(|e| e.to_string())?.get());
                Ok(())
            }

            fn report(&self) -> String {
                ours_report(&self.0)
            }
        }
    };
}

ours_on_clock!(
    /// Ours, reading the system clock on every call.
    OursSystem,
    SystemClock,
    "ours-system",
    "`Generator::new(Layout::twitter(), &[])` (SystemClock)",
    Generator::new(Layout::twitter(), &[])
);

ours_on_clock!(
    /// Ours, reading the process-wide cached clock.
    OursCached,
    &'static CachedClock,
    "ours-cached",
    "`Generator::builder(Layout::twitter()).clock(CachedClock::shared())`",
    Generator::builder(Layout::twitter()).clock(CachedClock::shared()).build()
);

ours_on_clock!(
    /// Ours on the time-stamp counter clock (`snowflake-tsc`), checked
    /// against the system clock once a millisecond.
    OursTsc,
    &'static TscClock,
    "ours-tsc",
    "`Generator::builder(Layout::twitter()).clock(snowflake_tsc::TscClock::shared())`",
    Generator::builder(Layout::twitter()).clock(TscClock::shared()).build()
);

/// Ours on the system clock, asking for a whole millisecond per call.
#[derive(Debug)]
pub struct OursBatch(pub Generator<SystemClock>);

impl Subject for OursBatch {
    const SPEC: Spec = Spec {
        name: "ours-batch",
        setup: "ours-system, `next_ids(4096)` per call",
        ..TWITTER_SPEC
    };

    fn build() -> Self {
        OursBatch(OursSystem::generator())
    }

    #[inline]
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
        let batch = self.0.next_ids(BATCH).map_err(|e| e.to_string())?;
        out.extend(batch.map(Id::get));
        Ok(())
    }

    fn report(&self) -> String {
        ours_report(&self.0)
    }
}

/// `snowflaked`'s lock-free generator, producing `i64` IDs (41-bit time).
#[derive(Debug)]
pub struct Snowflaked(pub snowflaked::sync::Generator);

impl Snowflaked {
    /// The generator, on Twitter's epoch.
    pub fn generator() -> snowflaked::sync::Generator {
        snowflaked::Builder::new()
            .instance(0)
            .epoch(twitter_epoch())
            .build()
    }
}

impl Subject for Snowflaked {
    const SPEC: Spec = Spec {
        name: "snowflaked",
        setup: "`snowflaked::sync::Generator`, Twitter epoch, `generate::<i64>()`",
        layout: "sign 1, time 41 (ms since Twitter epoch), instance 10, sequence 12",
        ..TWITTER_SPEC
    };

    fn build() -> Self {
        Snowflaked(Self::generator())
    }

    #[inline]
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
        out.push(self.0.generate::<i64>() as u64);
        Ok(())
    }
}

/// `rs-snowflake`: `&mut self` only, so shared behind a mutex.
#[derive(Debug)]
pub struct RsSnowflake(pub Mutex<rs_snowflake::SnowflakeIdGenerator>);

impl RsSnowflake {
    /// The generator, on Twitter's epoch.
    pub fn generator() -> rs_snowflake::SnowflakeIdGenerator {
        rs_snowflake::SnowflakeIdGenerator::with_epoch(0, 0, twitter_epoch())
    }
}

impl Subject for RsSnowflake {
    const SPEC: Spec = Spec {
        name: "rs-snowflake",
        setup: "`SnowflakeIdGenerator::real_time_generate`, Twitter epoch, in a `std::sync::Mutex` when shared",
        ..TWITTER_SPEC
    };

    fn build() -> Self {
        RsSnowflake(Mutex::new(Self::generator()))
    }

    #[inline]
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
        let mut generator = self.0.lock().map_err(|e| e.to_string())?;
        out.push(generator.real_time_generate() as u64);
        Ok(())
    }
}

/// The ferroid generator type used here.
pub type FerroidGenerator = ferroid::generator::AtomicSnowflakeGenerator<
    ferroid::id::SnowflakeTwitterId,
    ferroid::time::MonotonicClock<1>,
>;

/// `ferroid`'s lock-free generator on its ticker clock.
pub struct Ferroid(pub FerroidGenerator);

impl Ferroid {
    /// The generator, on Twitter's epoch.
    pub fn generator() -> FerroidGenerator {
        ferroid::generator::AtomicSnowflakeGenerator::new(
            0,
            ferroid::time::MonotonicClock::<1>::with_epoch(ferroid::time::TWITTER_EPOCH),
        )
    }

    /// The back-off ferroid calls when it cannot issue: a lost CAS asks for
    /// 0 and is retried at once; a used-up or behind clock yields the core.
    #[inline]
    pub fn backoff(yield_for: u64) {
        if yield_for == 0 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

// The generator has no `Debug` of its own.
impl std::fmt::Debug for Ferroid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ferroid(AtomicSnowflakeGenerator)")
    }
}

impl Subject for Ferroid {
    const SPEC: Spec = Spec {
        name: "ferroid",
        setup: "`AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock<1>>`, features atomic + cache-padded",
        layout: "reserved 1, time 41 (ms since Twitter epoch), machine 10, sequence 12",
        ..TWITTER_SPEC
    };

    fn build() -> Self {
        Ferroid(Self::generator())
    }

    #[inline]
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
        out.push(self.0.next_id(Self::backoff).to_raw());
        Ok(())
    }
}

/// `sonyflake`: a mutex inside; 10 ms time units, 8-bit sequence.
#[derive(Debug)]
pub struct Sonyflake(pub sonyflake::Sonyflake);

impl Sonyflake {
    /// The generator, machine 0, default start time.
    pub fn generator() -> sonyflake::Sonyflake {
        sonyflake::Sonyflake::builder()
            .machine_id(&|| Ok(0))
            .finalize()
            .expect("sonyflake builds")
    }
}

impl Subject for Sonyflake {
    const SPEC: Spec = Spec {
        name: "sonyflake",
        setup: "`Sonyflake::builder()`, machine ID 0 from a closure, no `pnet`",
        layout: "sign 1, time 39 (10 ms units since 2014-09-01), sequence 8, machine 16; fixed",
        epoch_ms: SONYFLAKE_EPOCH_MS,
        unit_ms: 10,
        time_shift: 24,
        ids_per_unit: 256,
    };

    fn build() -> Self {
        Sonyflake(Self::generator())
    }

    #[inline]
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
        out.push(self.0.next_id().map_err(|e| e.to_string())?.to_u64());
        Ok(())
    }
}

/// `idgenerator`: `&mut self` only, so shared behind a mutex.
#[derive(Debug)]
pub struct IdGenerator(pub Mutex<idgenerator::CoreIdGenerator>);

impl IdGenerator {
    /// The generator with Twitter's bit widths. Building it sleeps twice
    /// for 500 ms inside the crate.
    pub fn generator() -> idgenerator::CoreIdGenerator {
        let mut generator = idgenerator::CoreIdGenerator::default();
        generator
            .init(
                idgenerator::IdGeneratorOptions::new()
                    .method(1)
                    .base_time(TWITTER_EPOCH_MS)
                    .worker_id(0)
                    .worker_id_bit_len(10)
                    .seq_bit_len(12),
            )
            .expect("idgenerator options are valid");
        generator
    }
}

impl Subject for IdGenerator {
    const SPEC: Spec = Spec {
        name: "idgenerator",
        setup: "`CoreIdGenerator`, method 1, Twitter epoch, 10+12 bits, in a `std::sync::Mutex` when shared",
        layout: "sign 1, time 41 (ms since Twitter epoch), worker 10, sequence 12 (5..=4095 used)",
        // Sequence numbers 0..=4 are kept for manual use and clock steps back.
        ids_per_unit: 4091,
        ..TWITTER_SPEC
    };

    fn build() -> Self {
        IdGenerator(Mutex::new(Self::generator()))
    }

    #[inline]
    fn issue(&self, out: &mut Vec<u64>) -> Result<(), String> {
        let mut generator = self.0.lock().map_err(|e| e.to_string())?;
        out.push(generator.next_id() as u64);
        Ok(())
    }
}

/// Every subject's spec, in table order.
pub const SPECS: [Spec; 9] = [
    OursSystem::SPEC,
    OursCached::SPEC,
    OursTsc::SPEC,
    OursBatch::SPEC,
    Snowflaked::SPEC,
    RsSnowflake::SPEC,
    Ferroid::SPEC,
    Sonyflake::SPEC,
    IdGenerator::SPEC,
];

//! The clock `snowflake_next_id()` reads: the system clock, except in a test
//! build (feature `test-clock`), where a server variable that only such a
//! build declares sets it off the system clock, so that the tests can step
//! it back without changing the machine's time.

#[cfg(not(feature = "test-clock"))]
pub type ServerClock = snowflake::SystemClock;

#[cfg(not(feature = "test-clock"))]
pub const fn server_clock() -> ServerClock {
    snowflake::SystemClock
}

#[cfg(feature = "test-clock")]
pub use test_clock::{ServerClock, TEST_OFFSET_MS, server_clock};

#[cfg(feature = "test-clock")]
mod test_clock {
    use std::sync::atomic::{AtomicI64, Ordering};

    use snowflake::{Clock, SystemClock};

    /// How far the generator's clock is from the system's: the storage of
    /// the plugin's `snowflake_test_clock_offset_ms`, which the server writes
    /// at start and `SET GLOBAL` through the plugin's update function.
    pub static TEST_OFFSET_MS: AtomicI64 = AtomicI64::new(0);

    fn offset_ms() -> i64 {
        TEST_OFFSET_MS.load(Ordering::SeqCst)
    }

    /// The system clock plus the offset the test set.
    #[derive(Debug)]
    pub struct ServerClock;

    pub const fn server_clock() -> ServerClock {
        ServerClock
    }

    impl Clock for ServerClock {
        fn now_ms(&self) -> i64 {
            SystemClock.now_ms() + offset_ms()
        }

        fn wait_toward(&self, target_ms: i64) {
            SystemClock.wait_toward(target_ms - offset_ms())
        }
    }
}

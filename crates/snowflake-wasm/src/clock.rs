//! The generator's clock in WebAssembly: JavaScript's, read through two
//! functions the module imports (`snowflake.now_ms` and
//! `snowflake.wait_toward`), so that the core's generator runs unchanged on
//! `Date.now()` or on `performance.timeOrigin + performance.now()`, and
//! waits, when it must, as the page or Node can wait. On the host, where
//! the crate is built for the workspace's tests and lints, it is the core's
//! system clock.

use snowflake::Clock;

/// Which JavaScript clock a generator reads; the numbers are the glue's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsClock {
    source: u32,
}

impl JsClock {
    /// `Date.now()`.
    pub const DATE: u32 = 0;
    /// `performance.timeOrigin + performance.now()`, floored.
    pub const PERFORMANCE: u32 = 1;

    /// The clock `source` names, or `None` for a number the glue does not use.
    pub fn new(source: u32) -> Option<JsClock> {
        matches!(source, JsClock::DATE | JsClock::PERFORMANCE).then_some(JsClock { source })
    }
}

// SAFETY of the block: both functions take and return numbers only.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod imports {
    #[link(wasm_import_module = "snowflake")]
    unsafe extern "C" {
        /// Unix milliseconds from the clock `source`, a whole number.
        pub fn now_ms(source: u32) -> f64;
        /// Waits a short while toward `target_ms` on the clock `source`.
        pub fn wait_toward(source: u32, target_ms: f64);
    }
}

#[cfg(target_arch = "wasm32")]
impl Clock for JsClock {
    #[allow(unsafe_code)]
    fn now_ms(&self) -> i64 {
        // SAFETY: the import takes and returns plain numbers; the glue
        // defines it for every module it instantiates.
        let ms = unsafe { imports::now_ms(self.source) };
        ms as i64
    }

    #[allow(unsafe_code)]
    fn wait_toward(&self, target_ms: i64) {
        // SAFETY: as above.
        unsafe { imports::wait_toward(self.source, target_ms as f64) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Clock for JsClock {
    fn now_ms(&self) -> i64 {
        snowflake::SystemClock.now_ms()
    }

    fn wait_toward(&self, target_ms: i64) {
        snowflake::SystemClock.wait_toward(target_ms)
    }
}

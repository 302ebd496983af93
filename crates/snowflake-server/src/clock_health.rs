//! The kernel's own view of the system clock: whether it is synchronised,
//! and the errors it estimates, read with `adjtimex(2)` (a read-only query).
//!
//! The service shows it in `/readyz`, in `/metrics` and in a line at
//! start-up, and fails readiness on it only when the operator asks
//! (`Config::require_clock_sync`): many virtual machines report their clock
//! unsynchronised (`TIME_ERROR`, `STA_UNSYNC`, a maximum error of 16 s)
//! while the host keeps it right, and failing readiness by default would
//! take every such service down.
//!
//! Hand-written, with one `unsafe` call: no maintained crate wraps
//! `adjtimex` (`nix` does not), and the call is a read into a zeroed
//! struct.

use std::sync::Arc;

use serde_json::{Value, json};

/// What the kernel says of the system clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelClock {
    /// Whether the kernel counts the clock synchronised: neither the
    /// `STA_UNSYNC` status nor the `TIME_ERROR` state.
    pub synchronised: bool,
    /// The kernel's bound on the clock's error, in milliseconds.
    pub max_error_ms: f64,
    /// The kernel's estimate of the clock's error, in milliseconds.
    pub estimated_error_ms: f64,
    /// The offset the kernel is still correcting, in milliseconds.
    pub offset_ms: f64,
}

/// Where the service reads the kernel's clock from: [`KernelClock::read`],
/// or what a test hands it.
pub type KernelClockReader = Arc<dyn Fn() -> Option<KernelClock> + Send + Sync>;

impl KernelClock {
    /// The kernel's view now; `None` where there is no `adjtimex` (not
    /// Linux) or the kernel refuses.
    ///
    /// ```
    /// if let Some(clock) = snowflake_server::KernelClock::read() {
    ///     assert!(clock.max_error_ms >= 0.0);
    /// }
    /// ```
    pub fn read() -> Option<KernelClock> {
        read_kernel()
    }

    /// The reader of the real kernel.
    pub fn reader() -> KernelClockReader {
        Arc::new(KernelClock::read)
    }

    /// The JSON `/readyz` shows as `"clock"`.
    pub fn to_json(&self) -> Value {
        json!({
            "synchronised": self.synchronised,
            "max_error_ms": self.max_error_ms,
            "estimated_error_ms": self.estimated_error_ms,
            "offset_ms": self.offset_ms,
        })
    }

    /// Why the clock does not meet a bound of `max_error_ms` (the
    /// operator's `--require-clock-sync`), in words; `None` if it does.
    ///
    /// ```
    /// use snowflake_server::KernelClock;
    ///
    /// let clock = KernelClock { synchronised: true, max_error_ms: 12.0, estimated_error_ms: 1.0, offset_ms: 0.1 };
    /// assert_eq!(clock.falls_short_of(100), None);
    /// assert!(clock.falls_short_of(10).unwrap().contains("12 ms"));
    /// ```
    pub fn falls_short_of(&self, max_error_ms: u64) -> Option<String> {
        if !self.synchronised {
            return Some(format!(
                "the kernel says the clock is not synchronised (maximum error {:.0} ms); \
                 this service requires it synchronised (--require-clock-sync)",
                self.max_error_ms
            ));
        }
        (self.max_error_ms > max_error_ms as f64).then(|| {
            format!(
                "the kernel puts the clock's maximum error at {:.0} ms; this service requires \
                 at most {max_error_ms} ms (--require-clock-sync)",
                self.max_error_ms
            )
        })
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn read_kernel() -> Option<KernelClock> {
    // SAFETY: `timex` is plain old data, all zeros a valid value of it, and
    // `modes == 0` asks the kernel only to read (adjtimex(2)); the pointer
    // is to a live, exclusive local.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::adjtimex(&mut timex) };
    if state < 0 {
        return None;
    }
    // `offset` is in nanoseconds with STA_NANO, else microseconds; the
    // errors are always microseconds.
    let offset_ms = if timex.status & libc::STA_NANO != 0 {
        timex.offset as f64 / 1e6
    } else {
        timex.offset as f64 / 1e3
    };
    Some(KernelClock {
        synchronised: state != libc::TIME_ERROR && timex.status & libc::STA_UNSYNC == 0,
        max_error_ms: timex.maxerror as f64 / 1e3,
        estimated_error_ms: timex.esterror as f64 / 1e3,
        offset_ms,
    })
}

#[cfg(not(target_os = "linux"))]
fn read_kernel() -> Option<KernelClock> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's kernel answers, with errors that are not negative.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_answers() {
        let clock = KernelClock::read().expect("adjtimex answered nothing");
        assert!(
            clock.max_error_ms >= 0.0 && clock.estimated_error_ms >= 0.0,
            "{clock:?}"
        );
    }

    #[test]
    fn an_unsynchronised_clock_falls_short_of_any_bound() {
        let clock = KernelClock {
            synchronised: false,
            max_error_ms: 1.0,
            estimated_error_ms: 0.0,
            offset_ms: 0.0,
        };
        assert!(
            clock
                .falls_short_of(1000)
                .unwrap()
                .contains("not synchronised")
        );
        let synced = KernelClock {
            synchronised: true,
            ..clock
        };
        assert_eq!(synced.falls_short_of(1), None);
        assert!(synced.falls_short_of(0).is_some());
    }
}

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
    from_answer(Answer {
        state,
        status: timex.status,
        maxerror: timex.maxerror,
        esterror: timex.esterror,
        offset: timex.offset,
    })
}

/// What `adjtimex(2)` answered: its return value (the clock's state, or
/// -1 for an error) and the fields of `struct timex` the report reads, in
/// the kernel's own types, so that a test can hand [`from_answer`] any
/// answer the kernel could give.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug, Default)]
struct Answer {
    state: libc::c_int,
    status: libc::c_int,
    maxerror: libc::c_long,
    esterror: libc::c_long,
    offset: libc::c_long,
}

/// The report of an answer; `None` for an error. The clock counts as
/// synchronised only when the state is not `TIME_ERROR` and the status
/// lacks `STA_UNSYNC`: either alone means the kernel does not vouch for it.
#[cfg(target_os = "linux")]
fn from_answer(answer: Answer) -> Option<KernelClock> {
    if answer.state < 0 {
        return None;
    }
    // `offset` is in nanoseconds with STA_NANO, else microseconds; the
    // errors are always microseconds.
    let offset_ms = if answer.status & libc::STA_NANO != 0 {
        answer.offset as f64 / 1e6
    } else {
        answer.offset as f64 / 1e3
    };
    Some(KernelClock {
        synchronised: answer.state != libc::TIME_ERROR && answer.status & libc::STA_UNSYNC == 0,
        max_error_ms: answer.maxerror as f64 / 1e3,
        estimated_error_ms: answer.esterror as f64 / 1e3,
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

    /// A clock an NTP daemon keeps: state TIME_OK, PLL mode, microsecond
    /// offsets.
    #[cfg(target_os = "linux")]
    const SYNCHRONISED: Answer = Answer {
        state: libc::TIME_OK,
        status: libc::STA_PLL,
        maxerror: 12_500,
        esterror: 250,
        offset: -1_500,
    };

    #[cfg(target_os = "linux")]
    #[test]
    fn a_synchronised_answer_reads_in_milliseconds() {
        assert_eq!(
            from_answer(SYNCHRONISED),
            Some(KernelClock {
                synchronised: true,
                max_error_ms: 12.5,
                estimated_error_ms: 0.25,
                offset_ms: -1.5,
            })
        );
    }

    /// The unsynchronised answer of many virtual machines (TIME_ERROR with
    /// STA_UNSYNC, a maximum error of 16 s), and each of the two alone.
    #[cfg(target_os = "linux")]
    #[test]
    fn either_time_error_or_sta_unsync_alone_is_unsynchronised() {
        let vm = Answer {
            state: libc::TIME_ERROR,
            status: libc::STA_UNSYNC,
            maxerror: 16_000_000,
            ..SYNCHRONISED
        };
        let only_state = Answer {
            state: libc::TIME_ERROR,
            ..SYNCHRONISED
        };
        let only_flag = Answer {
            status: libc::STA_PLL | libc::STA_UNSYNC,
            ..SYNCHRONISED
        };
        for answer in [vm, only_state, only_flag] {
            let clock = from_answer(answer).unwrap();
            assert!(!clock.synchronised, "{answer:?}");
        }
        assert_eq!(from_answer(vm).unwrap().max_error_ms, 16_000.0);
    }

    /// Every other state the kernel returns (a leap second pending or in
    /// progress) leaves the clock synchronised.
    #[cfg(target_os = "linux")]
    #[test]
    fn leap_second_states_are_synchronised() {
        for state in [
            libc::TIME_OK,
            libc::TIME_INS,
            libc::TIME_DEL,
            libc::TIME_OOP,
            libc::TIME_WAIT,
        ] {
            let answer = Answer {
                state,
                ..SYNCHRONISED
            };
            assert!(from_answer(answer).unwrap().synchronised, "{answer:?}");
        }
    }

    /// An error from the call is no report at all, not a clock of zeros.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_error_is_no_report() {
        let answer = Answer {
            state: -1,
            ..SYNCHRONISED
        };
        assert_eq!(from_answer(answer), None);
    }

    /// Each of the 16 status flags alone: STA_UNSYNC alone makes the clock
    /// unsynchronised and STA_NANO alone reads the offset in nanoseconds;
    /// no other flag changes the report.
    #[cfg(target_os = "linux")]
    #[test]
    fn each_status_flag_alone() {
        for bit in 0..16 {
            let flag = 1 << bit;
            let clock = from_answer(Answer {
                status: flag,
                ..SYNCHRONISED
            })
            .unwrap();
            assert_eq!(clock.synchronised, flag != libc::STA_UNSYNC, "{flag:#06x}");
            let offset = if flag == libc::STA_NANO {
                -0.0015
            } else {
                -1.5
            };
            assert_eq!(clock.offset_ms, offset, "{flag:#06x}");
            assert_eq!(
                (clock.max_error_ms, clock.estimated_error_ms),
                (12.5, 0.25),
                "{flag:#06x}"
            );
        }
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

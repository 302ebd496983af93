//! Which clock a generator reads: the system's (asked on every call), the
//! `snowflake-tsc` crate's (the CPU's counter, checked against the system
//! clock once a millisecond; cheaper, and it sees a step of the wall clock
//! up to a millisecond late), or a `ManualClock` that moves only when told,
//! for tests.

use std::sync::Arc;

use pyo3::prelude::*;
use snowflake::{Clock, Error, ManualClock, SystemClock};
use snowflake_tsc::TscClock;

use crate::errors::{Fault, Result};
use crate::input;

/// ManualClock(now)
///
/// A clock that moves only when told, for tests of code that issues IDs:
/// a clock set back, a sequence used up, a layout running out, without
/// waiting on the real clock. Give it to Generator(clock=...). now is Unix
/// milliseconds, an RFC 3339 str or an aware datetime. A generator that
/// waits for the next tick moves it forward itself.
#[pyclass(frozen, module = "snowflake_toolkit", name = "ManualClock")]
#[derive(Debug)]
pub(crate) struct PyManualClock {
    clock: Arc<ManualClock>,
}

#[pymethods]
impl PyManualClock {
    #[new]
    fn new(now: &Bound<'_, PyAny>) -> Result<PyManualClock> {
        Ok(PyManualClock {
            clock: Arc::new(ManualClock::new(input::time(now, "now")?)),
        })
    }

    /// The time it reads, Unix milliseconds.
    #[getter]
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// set(now) -> None
    ///
    /// Sets the time, forward or back.
    fn set(&self, now: &Bound<'_, PyAny>) -> Result<()> {
        self.clock.set(input::time(now, "now")?);
        Ok(())
    }

    /// advance(ms) -> None
    ///
    /// Moves the time by ms milliseconds (back if negative).
    fn advance(&self, ms: i64) {
        self.clock.advance(ms);
    }

    fn __repr__(&self) -> String {
        format!("ManualClock({})", self.clock.now_ms())
    }
}

/// The clock a `Generator` reads: one of three, so that its every call
/// reads the system clock without an indirect call.
#[derive(Debug)]
pub(crate) enum Chosen {
    System(SystemClock),
    Tsc(&'static TscClock),
    Manual(Arc<ManualClock>),
}

impl Clock for Chosen {
    #[inline]
    fn now_ms(&self) -> i64 {
        match self {
            Chosen::System(clock) => clock.now_ms(),
            Chosen::Tsc(clock) => clock.now_ms(),
            Chosen::Manual(clock) => clock.now_ms(),
        }
    }

    fn wait_toward(&self, target_ms: i64) {
        match self {
            Chosen::System(clock) => clock.wait_toward(target_ms),
            Chosen::Tsc(clock) => clock.wait_toward(target_ms),
            Chosen::Manual(clock) => clock.wait_toward(target_ms),
        }
    }
}

/// The clock named by a `clock=` argument, and how a repr shows it.
pub(crate) fn resolve(value: Option<&Bound<'_, PyAny>>) -> Result<(Chosen, String)> {
    let Some(value) = value else {
        return Ok((Chosen::System(SystemClock), format!("'{SYSTEM}'")));
    };
    if let Ok(manual) = value.cast::<PyManualClock>() {
        let clock = Chosen::Manual(Arc::clone(&manual.get().clock));
        return Ok((clock, manual.repr()?.to_string()));
    }
    let name = input::text(value)?;
    if name == SYSTEM {
        return Ok((Chosen::System(SystemClock), format!("'{SYSTEM}'")));
    }
    if name == TSC {
        return Ok((Chosen::Tsc(TscClock::shared()), format!("'{TSC}'")));
    }
    Err(Fault::core(&Error::invalid_value(
        "clock",
        &value.repr()?.to_string(),
        "a clock is \"system\", \"tsc\" or a ManualClock",
    ))
    .raise())
}

const SYSTEM: &str = "system";
const TSC: &str = "tsc";

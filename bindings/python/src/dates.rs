//! Python's `datetime` and the core's Unix milliseconds, both ways, exactly.
//!
//! Both directions go through `datetime(1970, 1, 1, tzinfo=timezone.utc)`
//! and a `timedelta`, in whole days, seconds and microseconds: no float
//! ever holds a time (a float second loses the millisecond after the year
//! 2255), and the calendar is Python's own. A datetime without a time zone
//! is refused rather than read as local time.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDateTime, PyDelta, PyTzInfo};

use crate::errors::{Fault, Kind, Result};

const MS_PER_DAY: i64 = 86_400_000;

/// `datetime(1970, 1, 1, tzinfo=timezone.utc)`, made once.
static UNIX_EPOCH: PyOnceLock<Py<PyDateTime>> = PyOnceLock::new();

fn unix_epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyDateTime>> {
    UNIX_EPOCH
        .get_or_try_init(py, || {
            let utc = PyTzInfo::utc(py)?;
            Ok::<_, PyErr>(PyDateTime::new(py, 1970, 1, 1, 0, 0, 0, 0, Some(&*utc))?.unbind())
        })
        .map(|epoch| epoch.bind(py))
}

/// `ms` as an aware datetime in UTC. `what` names the attribute asked for
/// (`time`, `epoch`, `last`) in the error for a time outside the years 1
/// to 9999 that a datetime holds.
pub(crate) fn to_datetime<'py>(
    py: Python<'py>,
    ms: i64,
    what: &'static str,
) -> Result<Bound<'py, PyAny>> {
    let days = ms.div_euclid(MS_PER_DAY);
    let within_day = ms.rem_euclid(MS_PER_DAY);
    let delta = i32::try_from(days).ok().and_then(|days| {
        PyDelta::new(
            py,
            days,
            (within_day / 1000) as i32,
            (within_day % 1000) as i32 * 1000,
            false,
        )
        .ok()
    });
    let sum = match delta {
        Some(delta) => unix_epoch(py)?.add(delta),
        None => Err(PyOverflowError::new_err(())),
    };
    match sum {
        Ok(datetime) => Ok(datetime),
        Err(err) if err.is_instance_of::<PyOverflowError>(py) => {
            Err(Fault::core(&snowflake::Error::invalid_value(
                what,
                &snowflake::UnixMillis(ms).to_string(),
                "a Python datetime holds the years 1 to 9999; read the milliseconds instead",
            ))
            .raise())
        }
        Err(err) => Err(err.into()),
    }
}

/// The Unix milliseconds of an aware datetime, rounded down to the
/// millisecond; `field` names the argument in the refusal of a naive one.
pub(crate) fn from_datetime(value: &Bound<'_, PyDateTime>, field: &'static str) -> Result<i64> {
    let py = value.py();
    // `timedelta // timedelta` is Python's exact integer division; a naive
    // datetime cannot be subtracted from an aware one (TypeError).
    match value.sub(unix_epoch(py)?) {
        Ok(since) => Ok(since.floor_div(one_ms(py)?)?.extract::<i64>()?),
        Err(err) if err.is_instance_of::<PyTypeError>(py) => Err(naive(value, field)?),
        Err(err) => Err(err.into()),
    }
}

/// `timedelta(milliseconds=1)`, made once.
fn one_ms(py: Python<'_>) -> PyResult<&Bound<'_, PyDelta>> {
    static ONE_MS: PyOnceLock<Py<PyDelta>> = PyOnceLock::new();
    ONE_MS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(PyDelta::new(py, 0, 0, 1000, false)?.unbind())
        })
        .map(|ms| ms.bind(py))
}

/// The refusal of a datetime without a time zone.
fn naive(value: &Bound<'_, PyDateTime>, field: &'static str) -> Result<crate::errors::Raised> {
    let shown = value.call_method0("isoformat")?.str()?.to_string();
    Ok(Fault::new(
        Kind::InvalidInput,
        format!(
            "{field} {shown} has no time zone, so it names no moment; give an aware datetime, \
             such as datetime.now(timezone.utc)"
        ),
    )
    .field(field)
    .value(shown)
    .raise())
}

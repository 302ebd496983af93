//! Python values turned into the core's at the edge: IDs, times, field
//! values and counts. Text goes through the parsers the command and the
//! service use (the core's ID parser, `snowflake-io`'s time and field
//! parsers), and so do Python values they could not take directly: an int
//! out of range or a float is handed over as its text, so that the core
//! words the refusal (`id "-1" is negative`, `machine "1.5" is not a whole
//! number`) and nothing here decides what is allowed.

use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyDict, PyString};
use snowflake::{Clock, Error, Id, Layout, SystemClock};

use crate::dates;
use crate::errors::{Fault, Result};

/// An ID: an int, or text in decimal or `0x` hex as `snowflake decode`
/// reads it.
pub(crate) fn id(value: &Bound<'_, PyAny>) -> Result<Id> {
    if let Ok(id) = value.extract::<u64>() {
        return Ok(Id::new(id));
    }
    Ok(Id::parse(&text(value)?)?)
}

/// A time: Unix milliseconds, an RFC 3339 text, or an aware datetime.
pub(crate) fn time(value: &Bound<'_, PyAny>, field: &'static str) -> Result<i64> {
    if let Ok(ms) = value.extract::<i64>() {
        return Ok(ms);
    }
    if let Ok(datetime) = value.cast::<PyDateTime>() {
        return dates::from_datetime(datetime, field);
    }
    Ok(snowflake_io::parse_time(field, &text(value)?)?)
}

/// A time as `time` reads it, or the system clock's now for `None`.
pub(crate) fn time_or_now(value: Option<&Bound<'_, PyAny>>, field: &'static str) -> Result<i64> {
    match value {
        Some(value) => time(value, field),
        None => Ok(SystemClock.now_ms()),
    }
}

/// A time as text, for the parsers that take text only (a layout's epoch).
pub(crate) fn time_text(value: &Bound<'_, PyAny>, field: &'static str) -> Result<String> {
    if value.is_instance_of::<PyDateTime>() {
        return Ok(time(value, field)?.to_string());
    }
    text(value)
}

/// A str as it is; anything else as its `str()`, for a parser of the core's
/// to read and, most often, refuse in its own words.
pub(crate) fn text(value: &Bound<'_, PyAny>) -> Result<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(text.to_cow()?.into_owned()),
        Err(_) => Ok(value.str()?.to_string()),
    }
}

/// Field values by name, each read and checked against `layout`: an int
/// as it is, anything else as its text, by the command's field parser.
pub(crate) fn fields(
    layout: &Layout,
    given: Option<&Bound<'_, PyDict>>,
) -> Result<Vec<(String, u64)>> {
    let Some(given) = given else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(given.len());
    for (name, value) in given.iter() {
        let name: String = name.extract()?;
        let value = match value.extract::<u64>() {
            Ok(value) => value,
            Err(_) => {
                let text = text(&value)?;
                snowflake_io::parse_fields(layout, &[(name.as_str(), text.as_str())])?[0].1
            }
        };
        out.push((name, value));
    }
    Ok(out)
}

/// `(name, value)` pairs borrowed, as the core takes them.
pub(crate) fn borrowed(fields: &[(String, u64)]) -> Vec<(&str, u64)> {
    fields
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect()
}

/// A count of IDs, 0 to `max`.
pub(crate) fn count(
    value: &Bound<'_, PyAny>,
    field: &'static str,
    allowed: &'static str,
    max: u64,
) -> Result<u64> {
    match value.extract::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(refused(field, value, allowed)),
    }
}

/// The refusal of `value` for `field`, in the core's words: `field value
/// is not allowed; allowed`.
pub(crate) fn refused(
    field: &'static str,
    value: &Bound<'_, PyAny>,
    allowed: &'static str,
) -> crate::errors::Raised {
    let shown = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "(a value that cannot be shown)".to_string());
    Fault::core(&Error::invalid_value(field, &shown, allowed)).raise()
}

//! IDs made and written without a generator: `compose`, `bounds` for range
//! queries, and the text forms.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyTuple};
use snowflake::{Bounds, Id, TextForm};

use crate::errors::Result;
use crate::input;
use crate::json;
use crate::layout;

/// compose(timestamp=None, layout='twitter', **fields) -> int
///
/// The ID of the time given (Unix milliseconds, an RFC 3339 str or an
/// aware datetime; now if None) and the fields given by name (ints, or
/// str as typed); fields left out are 0. Raises InvalidInput naming the
/// field at fault.
#[pyfunction]
#[pyo3(
    signature = (timestamp = None, layout = None, **fields),
    text_signature = "(timestamp=None, layout='twitter', **fields)"
)]
pub(crate) fn compose(
    timestamp: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    fields: Option<&Bound<'_, PyDict>>,
) -> Result<u64> {
    let layout = layout::resolve(layout)?;
    let timestamp_ms = input::time_or_now(timestamp, "timestamp")?;
    let fields = input::fields(&layout, fields)?;
    Ok(layout
        .compose(timestamp_ms, &input::borrowed(&fields))?
        .get())
}

/// The first and last ID a layout can give in a time window, for `WHERE id
/// BETWEEN first AND last`. Unpacks as (first, last).
#[pyclass(frozen, eq, module = "snowflake_toolkit", name = "Bounds")]
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PyBounds {
    bounds: Bounds,
}

#[pymethods]
impl PyBounds {
    /// The smallest ID of the window.
    #[getter]
    fn first(&self) -> u64 {
        self.bounds.first().get()
    }

    /// The largest ID of the window.
    #[getter]
    fn last(&self) -> u64 {
        self.bounds.last().get()
    }

    /// The window's start, Unix milliseconds.
    #[getter]
    fn start_ms(&self) -> i64 {
        self.bounds.from_ms()
    }

    /// The window's end, Unix milliseconds (inclusive).
    #[getter]
    fn end_ms(&self) -> i64 {
        self.bounds.to_ms()
    }

    /// to_dict() -> dict
    ///
    /// The bounds in the JSON shape of the API and of `snowflake bounds
    /// --json` (from, to, first and last).
    fn to_dict<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        json::to_python(py, &self.bounds)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        let pair = PyTuple::new(py, [self.bounds.first().get(), self.bounds.last().get()])?;
        pair.try_iter()
    }

    fn __repr__(&self) -> String {
        format!(
            "Bounds(first={}, last={}, start_ms={}, end_ms={})",
            self.bounds.first(),
            self.bounds.last(),
            self.bounds.from_ms(),
            self.bounds.to_ms()
        )
    }
}

/// bounds(start, end, layout='twitter') -> Bounds
///
/// The IDs the layout can give from start to end, both inclusive (Unix
/// milliseconds, RFC 3339 strs or aware datetimes): first, last =
/// bounds(...) for WHERE id BETWEEN first AND last. An end before the start
/// raises InvalidInput with field 'from', as the core names the window's
/// ends from and to.
#[pyfunction]
#[pyo3(signature = (start, end, layout = None), text_signature = "(start, end, layout='twitter')")]
pub(crate) fn bounds(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
) -> Result<PyBounds> {
    let layout = layout::resolve(layout)?;
    let start = input::time(start, "start")?;
    let end = input::time(end, "end")?;
    Ok(PyBounds {
        bounds: layout.bounds(start, end)?,
    })
}

/// to_text(id, format) -> str
///
/// The ID written in a text form: 'decimal', 'hex' (0x...), 'base32'
/// (Crockford, 13 characters), 'base62' (11 characters) or 'base58'.
#[pyfunction]
pub(crate) fn to_text(id: &Bound<'_, PyAny>, format: &Bound<'_, PyAny>) -> Result<String> {
    Ok(input::id(id)?.to_text(form(format)?))
}

/// from_text(text, format=None) -> int
///
/// The ID a text holds in the form named (see to_text); without one,
/// decimal or 0x hex, as the command reads IDs.
#[pyfunction]
#[pyo3(signature = (text, format = None))]
pub(crate) fn from_text(text: &Bound<'_, PyAny>, format: Option<&Bound<'_, PyAny>>) -> Result<u64> {
    let form = format.map(form).transpose()?;
    Ok(Id::parse_as(&input::text(text)?, form)?.get())
}

fn form(value: &Bound<'_, PyAny>) -> Result<TextForm> {
    Ok(input::text(value)?.parse::<TextForm>()?)
}

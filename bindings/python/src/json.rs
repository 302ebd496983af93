//! The JSON shapes of the command and the API (the core's serde forms), as
//! Python dicts, lists, strs and ints: `to_dict()` everywhere.

use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::Result;

/// `value`'s JSON form as Python objects.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &impl Serialize) -> Result<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value).map_err(PyErr::from)?)
}

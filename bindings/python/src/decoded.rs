//! `decode` and what it gives: an ID's breakdown under one layout.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict};
use snowflake::{Decoded, Id, Layout, TextForm};

use crate::dates;
use crate::errors::Result;
use crate::input;
use crate::json;
use crate::layout;

/// An ID read under a layout: its time and its fields. Made by decode();
/// its attributes are read from the ID when asked for.
#[pyclass(frozen, eq, hash, module = "snowflake_toolkit", name = "Decoded")]
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyDecoded {
    layout: Arc<Layout>,
    id: Id,
}

impl PyDecoded {
    /// The breakdown of `id`, already checked to fit `layout`.
    pub(crate) fn new(layout: Arc<Layout>, id: Id) -> Result<PyDecoded> {
        layout.decode(id)?;
        Ok(PyDecoded { layout, id })
    }

    fn decoded(&self) -> Decoded<'_> {
        match self.layout.decode(self.id) {
            Ok(decoded) => decoded,
            Err(err) => unreachable!("the ID was checked against its layout when made: {err}"),
        }
    }
}

#[pymethods]
impl PyDecoded {
    /// The ID.
    #[getter]
    fn id(&self) -> u64 {
        self.id.get()
    }

    /// The name of the layout it was read under (a preset's, or the spec).
    #[getter]
    fn layout(&self) -> String {
        self.layout.name().into_owned()
    }

    /// When it was made, Unix milliseconds (the start of its tick).
    #[getter]
    fn timestamp_ms(&self) -> i64 {
        self.decoded().timestamp_ms()
    }

    /// When it was made, an aware datetime in UTC. Raises InvalidInput for
    /// a time past the year 9999; read timestamp_ms then.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        dates::to_datetime(py, self.decoded().timestamp_ms(), "time")
    }

    /// The fields after the time, by name, most significant first.
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        Ok(self.decoded().fields().into_py_dict(py)?)
    }

    /// The sequence number, or None for a layout without a sequence.
    #[getter]
    fn sequence(&self) -> Option<u64> {
        self.decoded().sequence()
    }

    /// The ID in its other text forms, by name: hex, base32, base62, base58.
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let text = TextForm::ENCODED
            .iter()
            .map(|&form| (form.name(), self.id.to_text(form)));
        Ok(text.into_py_dict(py)?)
    }

    /// to_dict() -> dict
    ///
    /// The breakdown in the JSON shape of the API and of `snowflake decode
    /// --json`: id (a str), layout, timestamp_ms, time, fields, binary,
    /// segments and text.
    fn to_dict<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        json::to_python(py, &self.decoded())
    }

    fn __repr__(&self) -> String {
        let decoded = self.decoded();
        let fields: Vec<String> = decoded
            .fields()
            .map(|(name, value)| format!("'{name}': {value}"))
            .collect();
        format!(
            "Decoded(id={}, layout='{}', time='{}', fields={{{}}})",
            self.id,
            self.layout.name(),
            decoded.time(),
            fields.join(", ")
        )
    }
}

/// decode(id, layout='twitter') -> Decoded
///
/// The ID's time and fields under the layout (a Layout, a preset's name or
/// a spec). The ID is an int or a str in decimal or 0x hex. Raises
/// InvalidInput (field 'id') for an ID the layout cannot have made.
#[pyfunction]
#[pyo3(signature = (id, layout = None), text_signature = "(id, layout='twitter')")]
pub(crate) fn decode(
    id: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyAny>>,
) -> Result<PyDecoded> {
    let layout = layout::resolve(layout)?;
    PyDecoded::new(layout, input::id(id)?)
}

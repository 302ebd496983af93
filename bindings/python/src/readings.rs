//! `readings`: one ID read under every preset, each reading judged, as
//! `snowflake decode --layout all` and the page's table do.

use std::sync::Arc;

use pyo3::prelude::*;
use snowflake::{Id, Layout, Readings};

use crate::decoded::PyDecoded;
use crate::errors::Result;
use crate::input;
use crate::json;
use crate::layout;

/// One preset's reading of an ID: whether the ID can be one of that
/// platform's, and why not. Made by readings().
#[pyclass(frozen, module = "snowflake_toolkit", name = "Reading")]
#[derive(Debug)]
pub(crate) struct PyReading {
    layout: Arc<Layout>,
    id: Id,
    now_ms: i64,
    verdict: &'static str,
    reason: Option<String>,
    fits: bool,
}

impl PyReading {
    /// The reading again, as the core makes it, for its JSON form.
    fn with_reading<T>(&self, f: impl FnOnce(&snowflake::Reading<'_>) -> T) -> T {
        let layouts = std::slice::from_ref(&*self.layout);
        let readings = Readings::new(layouts, self.id, self.now_ms);
        match readings.readings().first() {
            Some(reading) => f(reading),
            None => unreachable!("one layout gives one reading"),
        }
    }
}

#[pymethods]
impl PyReading {
    /// The preset's name.
    #[getter]
    fn layout(&self) -> String {
        self.layout.name().into_owned()
    }

    /// The platform whose IDs the preset reads, such as 'Discord'.
    #[getter]
    fn platform(&self) -> Option<&'static str> {
        self.layout.platform().map(|p| p.name())
    }

    /// 'possible', 'implausible' (its time is in the future or before the
    /// platform began) or 'impossible' (the ID does not fit the layout).
    #[getter]
    fn verdict(&self) -> &'static str {
        self.verdict
    }

    /// Why the reading is implausible or impossible, in words; None when possible.
    #[getter]
    fn reason(&self) -> Option<String> {
        self.reason.clone()
    }

    /// The ID decoded under the preset, or None when it does not fit.
    #[getter]
    fn decoded(&self) -> Result<Option<PyDecoded>> {
        self.fits
            .then(|| PyDecoded::new(Arc::clone(&self.layout), self.id))
            .transpose()
    }

    /// to_dict() -> dict
    ///
    /// The reading in the JSON shape of GET /api/v1/decode/{id}?layout=all.
    fn to_dict<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        self.with_reading(|reading| json::to_python(py, reading))
    }

    fn __repr__(&self) -> String {
        format!(
            "Reading(layout='{}', verdict='{}')",
            self.layout.name(),
            self.verdict
        )
    }
}

/// readings(id, now=None) -> list[Reading]
///
/// The ID read under every preset, in the order of layouts(), each judged
/// against now (or the time given): a time in the future or before the
/// platform began is implausible, an ID too wide for the layout impossible.
#[pyfunction]
#[pyo3(signature = (id, now = None))]
pub(crate) fn readings(
    id: &Bound<'_, PyAny>,
    now: Option<&Bound<'_, PyAny>>,
) -> Result<Vec<PyReading>> {
    let id = input::id(id)?;
    let now_ms = input::time_or_now(now, "now")?;
    let presets = layout::preset_layouts();
    let all = Readings::new(presets, id, now_ms);
    Ok(all
        .readings()
        .iter()
        .map(|reading| PyReading {
            layout: Arc::new(reading.layout().clone()),
            id,
            now_ms,
            verdict: reading.verdict().name(),
            reason: reading.reason().map(str::to_string),
            fits: reading.decoded().is_some(),
        })
        .collect())
}

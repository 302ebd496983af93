//! `Layout`, and how a `layout=` argument becomes one: a `Layout`, a
//! preset's name or a spec, read by the parser `--layout` uses.

use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyString;
use snowflake::Layout;

use crate::dates;
use crate::errors::Result;
use crate::input;
use crate::json;

/// How the bits of an ID are laid out: a preset (`twitter`, `discord`,
/// `instagram`, `sonyflake`, `mastodon`, `js53`) or a custom layout. Every
/// function takes one as `layout=`, or a preset's name, or a spec. Made
/// with `Layout.parse`; compares equal to another of the same widths,
/// epoch and tick.
#[pyclass(frozen, eq, hash, module = "snowflake_toolkit", name = "Layout")]
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyLayout {
    pub(crate) layout: Arc<Layout>,
}

#[pymethods]
impl PyLayout {
    /// Layout.parse(spec, epoch=None, tick_ms=None) -> Layout
    ///
    /// A preset's name (any case) or fields most significant first, such
    /// as 'time:41,datacenter:5,machine:5,sequence:12', as the command's
    /// --layout takes it; epoch (Unix milliseconds, an RFC 3339 str or an
    /// aware datetime) and tick_ms override the layout's, as --epoch and
    /// --tick-ms do. Raises InvalidInput naming the field at fault.
    #[staticmethod]
    #[pyo3(signature = (spec, epoch = None, tick_ms = None))]
    fn parse(
        spec: &Bound<'_, PyAny>,
        epoch: Option<&Bound<'_, PyAny>>,
        tick_ms: Option<&Bound<'_, PyAny>>,
    ) -> Result<PyLayout> {
        let spec = input::text(spec)?;
        let epoch = epoch.map(|e| input::time_text(e, "epoch")).transpose()?;
        let tick = tick_ms.map(input::text).transpose()?;
        let layout = snowflake_io::resolve_layout(&spec, epoch.as_deref(), tick.as_deref())?;
        Ok(PyLayout {
            layout: Arc::new(layout),
        })
    }

    /// The preset's name, or the spec of a custom layout.
    #[getter]
    fn name(&self) -> String {
        self.layout.name().into_owned()
    }

    /// The widths, most significant first: 'time:41,datacenter:5,machine:5,sequence:12'.
    #[getter]
    fn spec(&self) -> String {
        self.layout.spec()
    }

    /// The epoch, Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> i64 {
        self.layout.epoch_ms()
    }

    /// The epoch, an aware datetime in UTC.
    #[getter]
    fn epoch<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        dates::to_datetime(py, self.layout.epoch_ms(), "epoch")
    }

    /// Milliseconds per unit of the time field.
    #[getter]
    fn tick_ms(&self) -> u64 {
        self.layout.tick_ms()
    }

    /// How many bits the IDs use: 63 keeps a zero sign bit, fewer keep the
    /// top bits zero.
    #[getter]
    fn bits(&self) -> u8 {
        self.layout.bits()
    }

    /// The width of the time field.
    #[getter]
    fn time_bits(&self) -> u8 {
        self.layout.time_bits()
    }

    /// Whether the top bit is a sign bit kept at 0 (IDs fit a signed 64-bit integer).
    #[getter]
    fn sign_bit(&self) -> bool {
        self.layout.has_sign_bit()
    }

    /// Whether every ID is at most 2**53 - 1, exact as a JavaScript number.
    #[getter]
    fn js_safe(&self) -> bool {
        self.layout.is_js_safe()
    }

    /// The largest ID of the layout.
    #[getter]
    fn max_id(&self) -> u64 {
        self.layout.max_id().get()
    }

    /// The fields after the time field, most significant first, as (name, bits).
    #[getter]
    fn fields(&self) -> Vec<(String, u8)> {
        self.layout
            .fields()
            .iter()
            .map(|f| (f.name().to_string(), f.bits()))
            .collect()
    }

    /// The name of the sequence field, or None if the layout has none (it
    /// then composes and decodes, but cannot generate).
    #[getter]
    fn sequence(&self) -> Option<String> {
        self.layout.sequence().map(|f| f.name().to_string())
    }

    /// The names of the fields that tell nodes apart: all but the sequence.
    #[getter]
    fn node_fields(&self) -> Vec<String> {
        self.layout
            .node_fields()
            .map(|f| f.name().to_string())
            .collect()
    }

    /// How many nodes the node fields can tell apart.
    #[getter]
    fn nodes(&self) -> u128 {
        self.layout.node_count()
    }

    /// How many IDs one node can issue in one tick, or None without a sequence.
    #[getter]
    fn ids_per_tick(&self) -> Option<u64> {
        self.layout.ids_per_tick()
    }

    /// How many IDs one node can issue in a millisecond, or None without a sequence.
    #[getter]
    fn ids_per_ms(&self) -> Option<f64> {
        self.layout.ids_per_ms()
    }

    /// The last Unix millisecond the time field can hold.
    #[getter]
    fn last_ms(&self) -> i64 {
        self.layout.last_timestamp_ms()
    }

    /// The last time the time field can hold, an aware datetime in UTC.
    /// Raises InvalidInput for a layout that lasts past the year 9999
    /// (mastodon's does); read last_ms then.
    #[getter]
    fn last<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        dates::to_datetime(py, self.layout.last_timestamp_ms(), "last")
    }

    /// The platform whose IDs this preset reads ('Twitter'), or None for a
    /// custom layout or a preset given another epoch or tick.
    #[getter]
    fn platform(&self) -> Option<&'static str> {
        self.layout.platform().map(|p| p.name())
    }

    /// time_left(now=None) -> dict
    ///
    /// How long the time field lasts from now (or from the time given), as
    /// `snowflake layouts --json` says it: runs_out_ms, runs_out, left_ms,
    /// years_left, left (in words) and short (less than a year left).
    #[pyo3(signature = (now = None))]
    fn time_left<'py>(
        &self,
        py: Python<'py>,
        now: Option<&Bound<'py, PyAny>>,
    ) -> Result<Bound<'py, PyAny>> {
        let now_ms = input::time_or_now(now, "now")?;
        json::to_python(py, &self.layout.time_left(now_ms))
    }

    /// to_dict() -> dict
    ///
    /// The layout in the JSON shape of GET /api/v1/layouts.
    fn to_dict<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        json::to_python(py, &*self.layout)
    }

    fn __repr__(&self) -> String {
        let layout = &*self.layout;
        match layout.as_preset() {
            Some(_) => format!("Layout.parse('{}')", layout.name()),
            None => format!(
                "Layout.parse('{}', epoch={}, tick_ms={})",
                layout.spec(),
                layout.epoch_ms(),
                layout.tick_ms()
            ),
        }
    }

    fn __str__(&self) -> String {
        self.layout.name().into_owned()
    }
}

/// The presets, made once, in the core's order.
struct Presets {
    layouts: Vec<Layout>,
    shared: Vec<Arc<Layout>>,
}

fn presets() -> &'static Presets {
    static PRESETS: OnceLock<Presets> = OnceLock::new();
    PRESETS.get_or_init(|| {
        let layouts = Layout::presets().to_vec();
        let shared = layouts.iter().cloned().map(Arc::new).collect();
        Presets { layouts, shared }
    })
}

/// Every preset, as `readings` reads an ID under them.
pub(crate) fn preset_layouts() -> &'static [Layout] {
    &presets().layouts
}

/// The layout a `layout=` argument names; the default layout (twitter)
/// for `None`.
pub(crate) fn resolve(value: Option<&Bound<'_, PyAny>>) -> Result<Arc<Layout>> {
    let Some(value) = value else {
        return by_name(&Layout::default().name());
    };
    if let Ok(layout) = value.cast::<PyLayout>() {
        return Ok(Arc::clone(&layout.get().layout));
    }
    match value.cast::<PyString>() {
        Ok(text) => by_name(&text.to_cow()?),
        // Read as text, so that the layout parser refuses it in its words.
        Err(_) => by_name(&input::text(value)?),
    }
}

/// A preset's layout made once, found by its exact name (the common case),
/// or else whatever the layout parser reads in `text`.
fn by_name(text: &str) -> Result<Arc<Layout>> {
    if let Some(preset) = presets().shared.iter().find(|l| l.name() == text) {
        return Ok(Arc::clone(preset));
    }
    Ok(Arc::new(snowflake_io::resolve_layout(text, None, None)?))
}

/// layouts() -> list[Layout]
///
/// Every preset, in the order the command lists them.
#[pyfunction]
pub(crate) fn layouts() -> Vec<PyLayout> {
    presets()
        .shared
        .iter()
        .map(|layout| PyLayout {
            layout: Arc::clone(layout),
        })
        .collect()
}

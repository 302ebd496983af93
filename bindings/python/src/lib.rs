//! The snowflake core as a Python package, `snowflake_toolkit`: decode,
//! compose, layouts, readings, bounds and text forms; a generator with the
//! state file of `snowflake generate`; masking; a slot leased on etcd.
//!
//! # Design
//!
//! A shell over the crates, as STYLE.md asks of bindings: every rule is the
//! core's (or the store's, the masking crate's, the cluster crate's), and
//! every text a user gives goes through the parser the command uses
//! (`snowflake-io`'s for times, layouts and field values), so the package
//! answers as the command and the service do, in their words. What is
//! Python's own lives here: turning Python values into the core's and back
//! (`input`, `dates`, `json`), the exceptions (`errors`), letting the GIL
//! go while the core waits (`detach`), and refusing generators copied into
//! a child by `fork()` (`fork`).
//!
//! Modules: `errors` the exception classes and how errors become them;
//! `input` IDs, times, fields and counts from Python values; `dates`
//! datetimes; `json` the JSON shapes as dicts; `layout` the `Layout` class
//! and `layout=` arguments; `decoded` and `readings` reading IDs; `ids`
//! compose, bounds and text forms; `clock` the clocks a generator reads;
//! `detach` the waits without the GIL; `fork` the fork guard; `generator`
//! the `Generator`; `mask` the `Masker`; `cluster` the `ClusterNode` (with
//! the `cluster` feature; `no_cluster` without).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

mod clock;
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(not(feature = "cluster"))]
#[path = "no_cluster.rs"]
mod cluster;
mod dates;
mod decoded;
mod detach;
mod errors;
mod fork;
mod generator;
mod held;
mod ids;
mod input;
mod json;
mod layout;
mod mask;
mod readings;

/// Snowflake IDs: decode, compose and generate them with the snowflake
/// core, as the snowflake command and service do.
///
/// decode(id, layout='twitter'), compose(timestamp=None, layout='twitter',
/// **fields), bounds(start, end, layout='twitter'), readings(id),
/// layouts(), Layout.parse(spec, epoch=None, tick_ms=None),
/// to_text(id, format), from_text(text, format=None);
/// Generator(layout='twitter', state_file=None, clock='system', **fields);
/// Masker(key_file, layout='twitter'), new_key_file(path);
/// ClusterNode(endpoints, ...); ManualClock(now) for tests.
/// PRESETS names the presets, TEXT_FORMS the text forms and ERROR_KINDS the
/// kinds an error can be. Errors are Error and its subclasses; a bad value
/// is InvalidInput, a ValueError too.
#[pymodule(gil_used = true)]
fn snowflake_toolkit(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    errors::register(module)?;
    fork::register(module)?;
    module.add_class::<layout::PyLayout>()?;
    module.add_class::<decoded::PyDecoded>()?;
    module.add_class::<readings::PyReading>()?;
    module.add_class::<ids::PyBounds>()?;
    module.add_class::<clock::PyManualClock>()?;
    module.add_class::<generator::PyGenerator>()?;
    module.add_class::<mask::PyMasker>()?;
    module.add_class::<cluster::PyClusterNode>()?;
    module.add_function(wrap_pyfunction!(decoded::decode, module)?)?;
    module.add_function(wrap_pyfunction!(readings::readings, module)?)?;
    module.add_function(wrap_pyfunction!(layout::layouts, module)?)?;
    module.add_function(wrap_pyfunction!(ids::compose, module)?)?;
    module.add_function(wrap_pyfunction!(ids::bounds, module)?)?;
    module.add_function(wrap_pyfunction!(ids::to_text, module)?)?;
    module.add_function(wrap_pyfunction!(ids::from_text, module)?)?;
    module.add_function(wrap_pyfunction!(mask::new_key_file, module)?)?;
    module.add("PRESETS", PyTuple::new(py, snowflake::Layout::PRESETS)?)?;
    module.add("TEXT_FORMS", PyTuple::new(py, snowflake::TextForm::NAMES)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! `Generator`: the core's lock-free generator, with the state file of
//! `snowflake generate`.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyList};
use snowflake::{Generator, Layout};
use snowflake_store::FileMarkStore;

use crate::clock::{self, Chosen};
use crate::detach::Releasing;
use crate::errors::{Fault, Kind, Raised, Result};
use crate::held::{Away, Held, Refused};
use crate::input;
use crate::layout::{self, PyLayout};

type Issuer = Generator<Releasing<Chosen>>;

/// The most IDs one `next_ids` call returns: a list that size is tens of
/// megabytes already; more come from more calls.
const MAX_BATCH: u64 = 1_000_000;

const WHAT: &str = "this Generator";
const INSTEAD: &str = "Make the generator in each process after it starts (gunicorn: in \
                       post_fork or the app factory; multiprocessing: in the worker's initializer), \
                       each with a node of its own or a slot on etcd (ClusterNode).";

/// Generator(layout='twitter', state_file=None, clock='system', **fields)
///
/// Hands out IDs: strictly increasing from any thread, at up to the
/// layout's ceiling, safe when the clock steps back (it waits out up to 5
/// ms and refuses beyond). The node fields (such as machine=7) tell this
/// process's IDs from every other's and must be given: a generator with
/// none would issue as node 0 like every other one started the same way.
///
/// With state_file, a high-water mark is kept in that file (the one
/// `snowflake generate --state-file` keeps: same format, same lock), so
/// that a restart never issues an ID at or below one issued before; one
/// file serves one generator at a time, in this process or another.
///
/// clock is 'system' (the system clock, read on every call), 'tsc' (the
/// CPU's counter, checked against the system clock once a millisecond:
/// cheaper, but a step of the wall clock is seen up to a millisecond late)
/// or a ManualClock.
///
/// Thread-safe; the GIL is let go while it waits for the next time unit or
/// writes its mark. A generator copied into a child by fork() refuses to
/// issue: make one in the child. close() (or a with block) lowers the mark
/// to the last ID issued, so that the next start need not wait.
#[pyclass(frozen, module = "snowflake_toolkit", name = "Generator")]
#[derive(Debug)]
pub(crate) struct PyGenerator {
    /// The generator, until `close` takes it.
    issuer: Held<Issuer>,
    layout: Arc<Layout>,
    node: Vec<(String, u64)>,
    state_file: Option<PathBuf>,
    clock: String,
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(
        signature = (layout = None, state_file = None, clock = None, **fields),
        text_signature = "(layout='twitter', state_file=None, clock='system', **fields)"
    )]
    fn new(
        py: Python<'_>,
        layout: Option<&Bound<'_, PyAny>>,
        state_file: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> Result<PyGenerator> {
        let layout = layout::resolve(layout)?;
        let node = input::fields(&layout, fields)?;
        if node.is_empty() && layout.node_fields().next().is_some() {
            return Err(no_node(&layout));
        }
        let state_file = state_file.map(path).transpose()?;
        let (clock, clock_name) = clock::resolve(clock)?;
        let named = input::borrowed(&node);
        let away = Arc::new(Away::default());
        let builder = Generator::builder((*layout).clone())
            .node(&named)
            .clock(Releasing::on_python_threads(clock, &away));
        // Opening the state file locks it, reads it, may write it (an
        // fsync) and may wait out a mark ahead of the clock: all of it
        // without the GIL.
        let built = py.detach(|| match &state_file {
            Some(path) => builder
                .store(Releasing::on_python_threads(
                    FileMarkStore::new(path),
                    &away,
                ))
                .build(),
            None => builder.build(),
        })?;
        Ok(PyGenerator {
            issuer: Held::new(built, away),
            layout,
            node,
            state_file,
            clock: clock_name,
        })
    }

    /// next_id() -> int
    ///
    /// The next ID, above every ID this generator issued before.
    fn next_id(&self, py: Python<'_>) -> Result<u64> {
        Ok(self.issuer(py)?.next_id()?.get())
    }

    /// next_ids(n) -> list[int]
    ///
    /// The next n IDs (0 to 1,000,000), increasing, claimed a time unit at
    /// a time: the fastest way to many IDs.
    fn next_ids<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> Result<Bound<'py, PyList>> {
        let n = input::count(n, "n", "n is a count of IDs, 0 to 1000000", MAX_BATCH)?;
        let mut ids = Vec::with_capacity(n as usize);
        while (ids.len() as u64) < n {
            let batch = self.issuer(py)?.next_ids(n - ids.len() as u64)?;
            ids.extend(batch.map(|id| id.get()));
            // A long run can be stopped with Ctrl-C between time units. A
            // signal handler runs Python code, which may close the
            // generator: the issuer is looked up again after it.
            py.check_signals()?;
        }
        Ok(PyList::new(py, ids)?)
    }

    /// close() -> None
    ///
    /// Stops the generator; with a state file, lowers the mark to the last
    /// ID issued and releases the file. Calls after it raise Unavailable.
    /// Closing twice does nothing. In a child process of fork() it only
    /// lets the copy go: the mark is the parent's.
    fn close(&self, py: Python<'_>) -> Result<()> {
        self.issuer.close(py, |issuer| match issuer {
            Some(issuer) => py.detach(|| issuer.close()),
            None => Ok(()),
        })?;
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> Result<()> {
        self.close(py)
    }

    /// The layout it issues in.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            layout: Arc::clone(&self.layout),
        }
    }

    /// The node fields given, by name.
    #[getter]
    fn node<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        Ok(self.node.iter().into_py_dict(py)?)
    }

    /// The state file's path (a pathlib.Path), or None.
    #[getter]
    fn state_file(&self) -> Option<PathBuf> {
        self.state_file.clone()
    }

    /// Whether close() was called.
    #[getter]
    fn closed(&self) -> bool {
        self.issuer.is_closed()
    }

    fn __repr__(&self) -> String {
        let node: Vec<String> = self
            .node
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let state = match &self.state_file {
            Some(path) => format!(", state_file='{}'", path.display()),
            None => String::new(),
        };
        format!(
            "<Generator layout='{}'{state}, clock={}, {}{}>",
            self.layout.name(),
            self.clock,
            node.join(", "),
            if self.closed() { ", closed" } else { "" }
        )
    }
}

impl PyGenerator {
    /// The generator, for one call that holds the GIL until it is done
    /// with it, but where the core waits (see `Held`): refused in a child
    /// process of fork(), and once closing began.
    #[inline]
    fn issuer<'py>(&'py self, py: Python<'py>) -> Result<&'py Issuer> {
        self.issuer.get(py).map_err(|refused| match refused {
            Refused::Copy => self.issuer.lineage().refusal(WHAT, INSTEAD),
            Refused::Closed => closed(),
        })
    }
}

fn closed() -> Raised {
    Fault::new(
        Kind::Closed,
        "this Generator is closed; make a new one (with the same state file it starts above \
         every ID this one issued)",
    )
    .raise()
}

/// The refusal of a generator given no node field.
fn no_node(layout: &Layout) -> Raised {
    let names: Vec<String> = layout
        .node_fields()
        .map(|f| format!("{}=N", f.name()))
        .collect();
    let zeros: Vec<String> = layout
        .node_fields()
        .map(|f| format!("{} 0", f.name()))
        .collect();
    Fault::new(
        Kind::InvalidInput,
        format!(
            "Generator was given no node: it would issue as {}, as would every process started \
             the same way, and they would hand out the same IDs; give each process a node of its \
             own with Generator({}) (a 0 given on purpose counts), or hold a slot on etcd with \
             ClusterNode",
            zeros.join(", "),
            names.join(", ")
        ),
    )
    .field("node")
    .raise()
}

fn path(value: &Bound<'_, PyAny>) -> Result<PathBuf> {
    value.extract::<PathBuf>().map_err(|_| {
        input::refused(
            "state_file",
            value,
            "a state file is a path: a str or an os.PathLike",
        )
    })
}

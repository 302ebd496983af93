//! `ClusterNode`: a worker slot leased on etcd by the `snowflake-etcd`
//! crate's `Cluster`, as `snowflake serve --etcd` holds one, with no
//! service in between.
//!
//! The node runs on a tokio runtime of its own (one worker thread), which
//! keeps the lease, claims a slot and writes the slot's mark in etcd. A
//! Python call issues from the slot's generator only as the server does:
//! it takes the current holding, makes the IDs, and hands them out only
//! if the holding is still current and the fence still open
//! (`Cluster::still_valid`), so IDs made while the process was paused past
//! its lease are never returned.
//!
//! Stopping is `Cluster::shutdown`: stop issuing, lower the slot's mark to
//! the last ID issued, revoke the lease. It runs at `stop()`, at the end of
//! a `with` block, and at interpreter exit for every node not stopped yet.
//! A node garbage-collected unstopped only stops its runtime: its lease
//! runs out by itself, and the fence stops it issuing before that.
//!
//! The settings are `ClusterConfig`'s public fields, filled in [`config`]
//! alone; the checks the command makes of a cluster's name and endpoints
//! are the command's own (`snowflake-cli`'s `cluster.rs`) and are not
//! repeated here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyList, PyString};
use snowflake::{Clock, Layout, SystemClock};
use snowflake_etcd::{Cluster, ClusterConfig, Holding, NotReady};

use crate::detach::{Releasing, issuing};
use crate::errors::{Fault, Kind, Raised, Result};
use crate::fork::Lineage;
use crate::input;
use crate::json;
use crate::layout::{self, PyLayout};

const WHAT: &str = "this ClusterNode";
const INSTEAD: &str = "Make a ClusterNode in each process after it starts (gunicorn: in post_fork \
                       or the app factory; multiprocessing: in the worker's initializer): each \
                       leases a slot of its own.";

/// The most IDs one `next_ids` call returns, as for a Generator.
const MAX_BATCH: u64 = 1_000_000;

/// How often `wait_ready` looks whether a slot is held.
const POLL: Duration = Duration::from_millis(20);

/// ClusterNode(endpoints, cluster='default', layout='twitter', lease_ttl=10, timeout=30.0, **fixed)
///
/// A worker slot leased on etcd, issuing IDs as `snowflake serve --etcd`
/// does: the node takes a free slot (a value of every node field not fixed)
/// under /snowflake/{cluster}/, issues only while its lease is renewed in
/// time and the slot is still its own, keeps the slot's high-water mark in
/// etcd so that the next holder starts above every ID it issued, and hands
/// the slot over cleanly at stop(), at the end of a with block, or at
/// interpreter exit. endpoints is a str (comma-separated, as --etcd takes
/// it) or a list of http:// URLs; lease_ttl is in seconds (2 to 600);
/// fixed fields (datacenter=3) narrow the slots it takes. The constructor
/// waits up to timeout seconds for a slot (None: not at all) and raises
/// Unavailable if it has none by then; the node keeps trying. A node copied
/// into a child by fork() refuses to issue.
#[pyclass(frozen, module = "snowflake_toolkit", name = "ClusterNode")]
#[derive(Debug)]
pub(crate) struct PyClusterNode {
    node: Arc<Node>,
}

/// The running node, shared with the exit hook.
struct Node {
    cluster: Option<Cluster>,
    runtime: Option<tokio::runtime::Runtime>,
    lineage: Lineage,
    layout: Arc<Layout>,
    name: String,
    stopped: AtomicBool,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("cluster", &self.cluster)
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}

/// Every node not garbage-collected, for the exit hook.
static NODES: Mutex<Vec<Weak<Node>>> = Mutex::new(Vec::new());
static EXIT_HOOK: std::sync::Once = std::sync::Once::new();

#[pymethods]
impl PyClusterNode {
    #[new]
    #[pyo3(
        signature = (endpoints, cluster = None, layout = None, lease_ttl = None, timeout = Some(30.0), **fixed),
        text_signature = "(endpoints, cluster='default', layout='twitter', lease_ttl=10, timeout=30.0, **fixed)"
    )]
    fn new(
        py: Python<'_>,
        endpoints: &Bound<'_, PyAny>,
        cluster: Option<&Bound<'_, PyAny>>,
        layout: Option<&Bound<'_, PyAny>>,
        lease_ttl: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        fixed: Option<&Bound<'_, PyDict>>,
    ) -> Result<PyClusterNode> {
        let layout = layout::resolve(layout)?;
        let fixed = input::fields(&layout, fixed)?;
        snowflake_etcd::slot_space(&layout, &fixed)?;
        let name = match cluster {
            Some(name) => input::text(name)?,
            None => "default".to_string(),
        };
        let lease_ttl = match lease_ttl {
            Some(ttl) => input::count(ttl, "lease_ttl", "a lease lives 2 to 600 seconds", 600)
                .and_then(|ttl| match ttl {
                    2.. => Ok(ttl),
                    _ => Err(input::refused(
                        "lease_ttl",
                        ttl_value(py, ttl)?.bind(py),
                        "a lease lives 2 to 600 seconds",
                    )),
                })?,
            None => 10,
        };
        let hostname: String = py
            .import("socket")?
            .call_method0("gethostname")?
            .extract()?;
        let config = config(
            endpoint_list(endpoints)?,
            name.clone(),
            &layout,
            fixed,
            Duration::from_secs(lease_ttl),
            hostname,
        );
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowflake-etcd")
            .enable_all()
            .build()
            .map_err(|err| {
                Fault::new(Kind::Other, format!("cannot start the cluster node: {err}")).raise()
            })?;
        let cluster = {
            let _entered = runtime.enter();
            Cluster::start(config)
        };
        let node = Arc::new(Node {
            cluster: Some(cluster),
            runtime: Some(runtime),
            lineage: Lineage::here(),
            layout,
            name,
            stopped: AtomicBool::new(false),
        });
        register(py, &node)?;
        let made = PyClusterNode { node };
        if let Some(timeout) = timeout {
            made.wait_ready(py, Some(timeout))?;
        }
        Ok(made)
    }

    /// next_id() -> int
    ///
    /// The next ID from the slot held. Raises Unavailable (kind
    /// 'not_ready') while the node holds no slot, or lost it while the ID
    /// was being made.
    fn next_id(&self, py: Python<'_>) -> Result<u64> {
        let (cluster, holding) = self.node.holding()?;
        let id = issuing(py, || holding.generator.next_id())?;
        if !cluster.still_valid(&holding) {
            return Err(self.node.not_ready(cluster.current().err()));
        }
        Ok(id.get())
    }

    /// next_ids(n) -> list[int]
    ///
    /// The next n IDs (0 to 1,000,000) from the slot held, increasing.
    fn next_ids<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> Result<Bound<'py, PyList>> {
        let n = input::count(n, "n", "n is a count of IDs, 0 to 1000000", MAX_BATCH)?;
        let (cluster, holding) = self.node.holding()?;
        let mut ids = Vec::with_capacity(n as usize);
        while (ids.len() as u64) < n {
            let batch = issuing(py, || holding.generator.next_ids(n - ids.len() as u64))?;
            ids.extend(batch.map(|id| id.get()));
            if !cluster.still_valid(&holding) {
                return Err(self.node.not_ready(cluster.current().err()));
            }
            py.check_signals()?;
        }
        Ok(PyList::new(py, ids)?)
    }

    /// wait_ready(timeout=30.0) -> None
    ///
    /// Waits until the node holds a slot, up to timeout seconds (None:
    /// for as long as it takes); raises Unavailable (kind 'not_ready') with
    /// the node's reason if it holds none by then.
    #[pyo3(signature = (timeout = Some(30.0)), text_signature = "($self, timeout=30.0)")]
    fn wait_ready(&self, py: Python<'_>, timeout: Option<f64>) -> Result<()> {
        let cluster = self.node.cluster()?;
        let deadline = timeout.map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
        loop {
            let now = py.detach(|| cluster.current().map(drop));
            match now {
                Ok(()) => return Ok(()),
                Err(why) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    return Err(self.node.not_ready(Some(why)));
                }
                Err(_) => {
                    py.detach(|| std::thread::sleep(POLL));
                    py.check_signals()?;
                }
            }
        }
    }

    /// stop() -> None
    ///
    /// Leaves the cluster: stops issuing, lowers the slot's mark in etcd to
    /// the last ID issued, and revokes the lease, so that the next holder
    /// of the slot starts at once. Stopping twice does nothing; in a child
    /// process of fork() it does nothing (the slot is the parent's).
    fn stop(&self, py: Python<'_>) {
        self.node.stop(py);
    }

    /// status() -> dict
    ///
    /// What the node is doing, as /readyz reports it: slot,
    /// lease_remaining_s, fencing_events, state (in words) and clock_skew.
    fn status<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        json::to_python(py, &self.node.cluster()?.status())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.node.stop(py);
    }

    /// The slot held, by field, or None while the node holds none.
    #[getter]
    fn slot<'py>(&self, py: Python<'py>) -> Result<Option<Bound<'py, PyDict>>> {
        let Ok((_, holding)) = self.node.holding() else {
            return Ok(None);
        };
        Ok(Some(holding.slot.0.iter().into_py_dict(py)?))
    }

    /// The layout it issues in.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            layout: Arc::clone(&self.node.layout),
        }
    }

    /// Whether stop() was called (or the interpreter is exiting).
    #[getter]
    fn stopped(&self) -> bool {
        self.node.stopped.load(Ordering::Acquire)
    }

    fn __repr__(&self) -> String {
        let state = match (self.stopped(), self.node.holding()) {
            (true, _) => "stopped".to_string(),
            (false, Ok((_, holding))) => format!("slot {}", holding.slot),
            (false, Err(_)) => "no slot".to_string(),
        };
        format!(
            "<ClusterNode cluster='{}' layout='{}' {state}>",
            self.node.name,
            self.node.layout.name()
        )
    }
}

impl Node {
    fn cluster(&self) -> Result<&Cluster> {
        self.lineage.check(WHAT, INSTEAD)?;
        match &self.cluster {
            Some(cluster) if !self.stopped.load(Ordering::Acquire) => Ok(cluster),
            _ => Err(Fault::new(
                Kind::Closed,
                "this ClusterNode is stopped; make a new one to issue again",
            )
            .raise()),
        }
    }

    /// The cluster and the holding to issue from now.
    fn holding(&self) -> Result<(&Cluster, Arc<Holding>)> {
        let cluster = self.cluster()?;
        let holding = cluster.current().map_err(|why| self.not_ready(Some(why)))?;
        Ok((cluster, holding))
    }

    fn not_ready(&self, why: Option<NotReady>) -> Raised {
        let (reason, needs_operator) = match &why {
            Some(why) => (why.reason(), why.needs_operator()),
            None => (
                "fenced: the slot was given up while the IDs were made",
                false,
            ),
        };
        Fault::new(
            Kind::NotReady,
            format!("cluster node {} holds no slot now: {reason}", self.name),
        )
        .needs_operator(needs_operator)
        .raise()
    }

    fn stop(&self, py: Python<'_>) {
        if self.lineage.is_copy() || self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        if let (Some(cluster), Some(runtime)) = (&self.cluster, &self.runtime) {
            py.detach(|| runtime.block_on(cluster.shutdown()));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let (cluster, runtime) = (self.cluster.take(), self.runtime.take());
        if self.lineage.is_copy() {
            // The runtime's threads and the connections are the parent's:
            // joining or closing them here could hang or disturb the
            // parent. The child lets them be.
            std::mem::forget(cluster);
            std::mem::forget(runtime);
            return;
        }
        drop(cluster);
        if let Some(runtime) = runtime {
            runtime.shutdown_background();
        }
    }
}

/// Remembers `node` for the exit hook, registering the hook once.
fn register(py: Python<'_>, node: &Arc<Node>) -> PyResult<()> {
    let mut hooked = Ok(());
    EXIT_HOOK.call_once(|| {
        hooked = wrap_pyfunction!(stop_all_at_exit, py).and_then(|hook| {
            py.import("atexit")?.call_method1("register", (hook,))?;
            Ok(())
        });
    });
    hooked?;
    if let Ok(mut nodes) = NODES.lock() {
        nodes.retain(|n| n.strong_count() > 0);
        nodes.push(Arc::downgrade(node));
    }
    Ok(())
}

/// Stops every node still running, as the interpreter exits.
#[pyfunction]
fn stop_all_at_exit(py: Python<'_>) {
    let nodes: Vec<Arc<Node>> = NODES
        .lock()
        .map(|nodes| nodes.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default();
    for node in nodes {
        node.stop(py);
    }
}

/// The settings of a node: the crate's defaults for `serve --etcd`, with
/// what the caller gave, and a clock that lets the GIL go while it waits.
fn config(
    endpoints: Vec<String>,
    name: String,
    layout: &Layout,
    fixed: Vec<(String, u64)>,
    lease_ttl: Duration,
    hostname: String,
) -> ClusterConfig {
    let clock: Arc<dyn Clock> = Arc::new(Releasing::on_marked_threads(SystemClock));
    ClusterConfig::new(endpoints, layout.clone())
        .with_name(name)
        .with_fixed(fixed)
        .with_lease_ttl(lease_ttl)
        .with_clock(clock)
        .with_hostname(hostname)
}

/// The endpoints: a comma-separated str, as --etcd takes them, or a list.
fn endpoint_list(value: &Bound<'_, PyAny>) -> Result<Vec<String>> {
    let given: Vec<String> = match value.cast::<PyString>() {
        Ok(text) => text
            .to_cow()?
            .split(',')
            .map(|e| e.trim().to_string())
            .collect(),
        Err(_) => value.extract().map_err(|_| {
            input::refused(
                "endpoints",
                value,
                "endpoints are a str of comma-separated URLs or a list of them",
            )
        })?,
    };
    let given: Vec<String> = given.into_iter().filter(|e| !e.is_empty()).collect();
    if given.is_empty() {
        return Err(input::refused(
            "endpoints",
            value,
            "give one or more etcd endpoints, such as http://127.0.0.1:2379",
        ));
    }
    Ok(given)
}

fn ttl_value(py: Python<'_>, ttl: u64) -> PyResult<Py<PyAny>> {
    Ok(ttl.into_pyobject(py)?.into_any().unbind())
}

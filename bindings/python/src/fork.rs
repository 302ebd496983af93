//! A generator copied into a child process by `fork()` never issues.
//!
//! # Design
//!
//! A copy starts from the parent's state and issues with the parent's node
//! fields, so the parent and every child (gunicorn's workers, uWSGI's, a
//! `multiprocessing` pool's) would hand out the same IDs. The copy cannot
//! be made safe where it stands: a node of its own is a value only the
//! operator can give, a state file serves one generator (and the child
//! shares the parent's lock on it), and a cluster node's threads and
//! connections do not survive the fork. So the copy refuses, with a
//! message that says what to do instead: make the generator in the child.
//!
//! The child is known by a count of forks, raised in every child by an
//! `os.register_at_fork` hook, which `os.fork()`, `multiprocessing` (fork
//! and forkserver) and subprocess with a `preexec_fn` all run. Each object
//! remembers the count it was made at and compares it on every call: one
//! relaxed load, where asking for the process ID would be a system call.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{Fault, Kind};

/// How many forks lie between the first process that loaded this module
/// and this one.
static FORKS: AtomicU64 = AtomicU64::new(0);

#[pyfunction]
fn after_fork_in_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// Registers the hook that counts forks in every child.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let hook = wrap_pyfunction!(after_fork_in_child, module)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("after_in_child", hook)?;
    py.import("os")?
        .getattr("register_at_fork")?
        .call((), Some(&kwargs))?;
    Ok(())
}

/// Which process an object was made in.
#[derive(Debug)]
pub(crate) struct Lineage {
    forks: u64,
    pid: u32,
}

impl Lineage {
    /// This process.
    pub(crate) fn here() -> Lineage {
        Lineage {
            forks: FORKS.load(Ordering::Relaxed),
            pid: std::process::id(),
        }
    }

    /// Whether this is a copy of the object in a child process.
    #[inline]
    pub(crate) fn is_copy(&self) -> bool {
        FORKS.load(Ordering::Relaxed) != self.forks
    }

    /// Refuses a copy made by `fork()`; `what` names the object (`this
    /// ClusterNode`) and `instead` says how a child gets one of its own.
    #[cfg(feature = "cluster")]
    #[inline]
    pub(crate) fn check(&self, what: &str, instead: &str) -> crate::errors::Result<()> {
        if self.is_copy() {
            return Err(self.refusal(what, instead));
        }
        Ok(())
    }

    /// The refusal [`Lineage::check`] raises for a copy.
    #[cold]
    pub(crate) fn refusal(&self, what: &str, instead: &str) -> crate::errors::Raised {
        Fault::new(
            Kind::Forked,
            format!(
                "{what} was made in process {} and copied into process {} by fork(); a copy \
                 would hand out the IDs its parent hands out, so it never issues. {instead}",
                self.pid,
                std::process::id()
            ),
        )
        .raise()
    }
}

//! `ClusterNode` in a build without the `cluster` feature: the name is
//! there, and making one says how to get a build that has it.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{Fault, Kind, Result};

/// ClusterNode(endpoints, cluster='default', layout='twitter', lease_ttl=10, timeout=30.0, **fixed)
///
/// A slot leased on etcd. This build of snowflake_toolkit has no cluster
/// mode: making one raises Unavailable (kind 'no_cluster').
#[pyclass(frozen, module = "snowflake_toolkit", name = "ClusterNode")]
#[derive(Debug)]
pub(crate) struct PyClusterNode;

#[pymethods]
impl PyClusterNode {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Result<PyClusterNode> {
        Err(Fault::new(
            Kind::NoCluster,
            "this build of snowflake_toolkit has no cluster mode; install it with `pip install \
             --config-settings=maturin.build-args=--features=cluster ./bindings/python` (the etcd \
             client needs protoc and the protobuf headers to build: Debian's protobuf-compiler \
             and libprotobuf-dev)",
        )
        .raise())
    }
}

//! Cluster mode when this binary was built without it: every entry point
//! refuses with the one line that says how to get it.

use std::net::SocketAddr;
use std::sync::Arc;

use snowflake::Layout;
use snowflake_server::IdSource;

use crate::args::{ClusterStatusArgs, ServeArgs};
use crate::failure::Failure;

/// Why cluster mode is missing, and how to get it.
fn refusal() -> Failure {
    Failure::Unsupported(
        "cluster mode (--etcd, cluster status) is not built into this binary; \
         build it with: cargo build --release -p snowflake-cli --features cluster"
            .into(),
    )
}

pub fn available() -> Result<(), Failure> {
    Err(refusal())
}

pub fn source(
    _: &ServeArgs,
    _: &Layout,
    _: Vec<(String, u64)>,
    _: SocketAddr,
) -> Result<Arc<dyn IdSource>, Failure> {
    Err(refusal())
}

pub fn status(_: &ClusterStatusArgs) -> Result<String, Failure> {
    Err(refusal())
}

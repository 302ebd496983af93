//! Many cluster nodes in this process on one tokio runtime. Each node is a
//! `Cluster` as `snowflake serve --etcd` runs it: its own etcd client and
//! connections, lease, renewals, slot key, mark writes and watch on its
//! key. What they share is the runtime's two worker threads and this
//! process; none of them serves HTTP, and IDs are asked of them by the
//! test as the server asks: `current()`, make IDs, `still_valid()`.

use std::sync::Arc;
use std::time::Duration;

use snowflake::Layout;
use snowflake_etcd::{Cluster, ClusterConfig, Holding};

use crate::etcd::Etcd;

/// Nodes on one runtime; each leaves the cluster cleanly when the fleet is
/// dropped.
pub struct Fleet {
    runtime: tokio::runtime::Runtime,
    nodes: Vec<Cluster>,
}

impl Fleet {
    pub fn new() -> Fleet {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Fleet {
            runtime,
            nodes: Vec::new(),
        }
    }

    /// Starts a node with `config`; it joins in the background.
    pub fn join(&mut self, config: ClusterConfig) -> &Cluster {
        let _entered = self.runtime.enter();
        self.nodes.push(Cluster::start(config));
        self.nodes.last().unwrap()
    }

    pub fn nodes(&self) -> &[Cluster] {
        &self.nodes
    }

    /// `count` IDs from `node`, as the server hands them out: all of them
    /// if the node was issuing before and after making them, else none.
    pub fn issue(node: &Cluster, count: usize) -> Option<(Arc<Holding>, Vec<u64>)> {
        let holding = node.current().ok()?;
        let ids = (0..count)
            .map(|_| holding.generator.next_id().map(|id| id.get()))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        node.still_valid(&holding).then_some((holding, ids))
    }

    /// Runs `future` on the fleet's runtime.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let nodes = std::mem::take(&mut self.nodes);
        self.runtime.block_on(async move {
            let leaving: Vec<_> = nodes
                .into_iter()
                .map(|node| tokio::spawn(async move { node.shutdown().await }))
                .collect();
            for task in leaving {
                let _ = task.await;
            }
        });
    }
}

/// A node of cluster `name` on `etcd` with the settings `snowflake serve
/// --etcd` uses by default, but `ttl`; no node field fixed, the system
/// clock. `n` tells nodes apart in their slot keys.
pub fn config(etcd: &Etcd, name: &str, layout: &Layout, ttl: Duration, n: usize) -> ClusterConfig {
    etcd.node_config(name, layout.clone())
        .with_lease_ttl(ttl)
        .with_hostname("fleet")
        .with_address(format!("in-process #{n}"))
}

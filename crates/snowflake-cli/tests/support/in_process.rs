//! A cluster node run inside the test, on a clock the test sets: for the
//! scenarios where only the slot's mark, not the time that passed, may put
//! a new holder above the IDs issued before.

use std::sync::Arc;
use std::time::Duration;

use snowflake::{Clock, Layout};
use snowflake_etcd::{Cluster, ClusterConfig, Holding};

use crate::etcd::Etcd;
use crate::scenario::{TTL_S, poll};

/// A node of cluster `test` in this process, fixed to one slot of the
/// twitter layout; leaves the cluster when dropped.
pub struct InProcess {
    pub cluster: Cluster,
    /// `None` once killed.
    runtime: Option<tokio::runtime::Runtime>,
}

impl InProcess {
    /// Joins with `config` (see [`config`]).
    pub fn start(config: ClusterConfig) -> InProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let cluster = runtime.block_on(async { Cluster::start(config) });
        InProcess {
            cluster,
            runtime: Some(runtime),
        }
    }

    /// Waits until the node holds its slot.
    pub fn holding(&self, within: Duration, context: impl Fn() -> String) -> Arc<Holding> {
        poll(
            within,
            "the in-process node never took its slot",
            || self.cluster.current().ok(),
            || format!("{:?}\n{}", self.cluster.status(), context()),
        )
    }

    /// `count` IDs from `holding`'s generator.
    pub fn ids(&self, holding: &Arc<Holding>, count: usize) -> Vec<u64> {
        let generator = Arc::clone(&holding.generator);
        let made = async move {
            tokio::task::spawn_blocking(move || {
                (0..count)
                    .map(|_| generator.next_id().map(|id| id.get()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
        };
        self.runtime().block_on(made).unwrap().unwrap()
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime.as_ref().expect("the node was killed")
    }

    /// Stops the node as a crash would: every task of its runtime (the
    /// session, its renewals, the watch) is dropped where it stands and its
    /// connections to etcd close; nothing lowers the mark or revokes the
    /// lease, so the slot stays taken until the lease runs out.
    pub fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(runtime) = &self.runtime {
            runtime.block_on(self.cluster.shutdown());
        }
    }
}

/// A node of cluster `test` on `etcd`, fixed to `slot` of the twitter
/// layout, reading `clock`, on the scenarios' lease TTL; every other
/// setting `snowflake serve --etcd`'s.
pub fn config(etcd: &Etcd, slot: &str, clock: Arc<dyn Clock>) -> ClusterConfig {
    let fixed = slot
        .split(',')
        .map(|part| {
            let (name, value) = part.split_once('=').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect();
    etcd.node_config("test", Layout::twitter())
        .with_fixed(fixed)
        .with_lease_ttl(Duration::from_secs(TTL_S))
        .with_clock(clock)
        .with_hostname("test")
        .with_address("in-process")
}

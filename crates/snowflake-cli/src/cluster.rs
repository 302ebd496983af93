//! Cluster mode: settings from flags, the adapter that lets the server
//! issue from a leased slot without knowing of etcd, and
//! `snowflake cluster status`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use snowflake::{Clock, DEFAULT_RESERVE_MS, DEFAULT_TOLERANCE_MS, Error, Layout};
use snowflake_etcd::{Cluster, ClusterConfig, NodeInfo};
use snowflake_server::{IdSource, ServerGenerator, Shutdown, Unavailable};

use crate::args::{ClusterStatusArgs, EtcdArgs, ServeArgs};
use crate::failure::Failure;

/// This binary has cluster mode.
pub fn available() -> Result<(), Failure> {
    Ok(())
}

/// Joins the cluster as the node serving at `addr`; returns at once, and
/// the source is ready when it holds a slot.
pub fn source(
    args: &ServeArgs,
    layout: &Layout,
    node: Vec<(String, u64)>,
    addr: SocketAddr,
) -> Result<Arc<dyn IdSource>, Failure> {
    let mut config = config(&args.etcd, layout, node, args.lease_ttl)?;
    config.info.address = format!("http://{addr}/");
    tracing::info!(endpoints = ?config.endpoints, name = %config.name, "joining the cluster");
    let clock = Arc::clone(&config.clock);
    Ok(Arc::new(ClusterSource {
        cluster: Cluster::start(config),
        layout: layout.clone(),
        clock,
    }))
}

/// A slot leased on etcd, as the server sees a source of IDs.
struct ClusterSource {
    cluster: Cluster,
    layout: Layout,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ClusterSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSource")
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

impl IdSource for ClusterSource {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    fn current(&self) -> Result<Arc<ServerGenerator>, Unavailable> {
        self.cluster
            .current()
            .map(|holding| Arc::clone(&holding.generator))
            .map_err(|why| Unavailable::new(why.to_string()))
    }

    /// The fence is checked again after the IDs were made, so IDs made while
    /// the process was paused past its lease are never handed out.
    fn still_valid(&self, generator: &Arc<ServerGenerator>) -> bool {
        self.cluster.still_issuing(generator)
    }

    fn status(&self) -> serde_json::Map<String, serde_json::Value> {
        let status = self.cluster.status();
        let mut fields = serde_json::Map::new();
        fields.insert("slot".into(), status.slot.into());
        fields.insert("lease_remaining_s".into(), status.lease_remaining_s.into());
        fields.insert("fencing_events".into(), status.fencing_events.into());
        fields
    }

    fn publish_metrics(&self) {
        let status = self.cluster.status();
        metrics::counter!("snowflake_cluster_fencing_events_total").absolute(status.fencing_events);
        metrics::gauge!("snowflake_cluster_lease_remaining_seconds")
            .set(status.lease_remaining_s.unwrap_or(0.0));
        metrics::gauge!("snowflake_cluster_slot_held").set(if status.slot.is_some() {
            1.0
        } else {
            0.0
        });
    }

    fn shutdown(self: Arc<Self>) -> Shutdown {
        Box::pin(async move {
            self.cluster.shutdown().await;
            Ok(())
        })
    }
}

/// The password never comes from a flag, where `ps` would show it.
const PASSWORD_ENV: &str = "SNOWFLAKE_ETCD_PASSWORD";

pub fn config(
    etcd: &EtcdArgs,
    layout: &Layout,
    fixed: Vec<(String, u64)>,
    ttl: u64,
) -> Result<ClusterConfig, Failure> {
    snowflake_etcd::slot_space(layout, &fixed)?;
    // The name is part of every key: keep it to one path segment, so that
    // clusters with different names share nothing.
    let name = &etcd.cluster;
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return Err(Failure::Usage(Error::invalid_value(
            "cluster",
            name,
            "a cluster name is 1 to 64 letters, digits, '-', '_' or '.'",
        )));
    }
    let ca_pem = match &etcd.etcd_ca {
        None => None,
        Some(path) => Some(std::fs::read(path).map_err(|err| {
            Failure::Runtime(format!("cannot read the etcd CA {}: {err}", path.display()))
        })?),
    };
    let auth = match &etcd.etcd_user {
        None => None,
        Some(user) => Some((
            user.clone(),
            std::env::var(PASSWORD_ENV).map_err(|_| {
                Error::invalid_value(
                    "etcd_user",
                    user,
                    "set its password in SNOWFLAKE_ETCD_PASSWORD",
                )
            })?,
        )),
    };
    let lease_ttl = Duration::from_secs(ttl);
    Ok(ClusterConfig {
        endpoints: endpoints(etcd)?,
        name: etcd.cluster.clone(),
        layout: layout.clone(),
        fixed,
        lease_ttl,
        margin: ClusterConfig::default_margin(lease_ttl),
        tolerance_ms: DEFAULT_TOLERANCE_MS,
        reserve_ms: DEFAULT_RESERVE_MS,
        clock: Arc::new(snowflake::SystemClock),
        info: NodeInfo {
            hostname: hostname(),
            pid: std::process::id(),
            address: String::new(),
            since_ms: 0,
        },
        auth,
        ca_pem,
    })
}

/// The endpoints, each an http(s) URL with a host and port, so that a typo
/// fails here with status 2 rather than as a node that is never ready.
fn endpoints(etcd: &EtcdArgs) -> Result<Vec<String>, Error> {
    let endpoints: Vec<String> = etcd
        .etcd
        .iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    if endpoints.is_empty() {
        return Err(Error::invalid_value(
            "etcd",
            "\"\"",
            "give one or more etcd endpoints, such as http://127.0.0.1:2379",
        ));
    }
    for endpoint in &endpoints {
        let rest = endpoint
            .strip_prefix("http://")
            .or_else(|| endpoint.strip_prefix("https://"));
        let ok = rest.is_some_and(|r| {
            r.rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
        });
        if !ok {
            return Err(Error::invalid_value(
                "etcd",
                endpoint,
                "an endpoint is http://HOST:PORT or https://HOST:PORT",
            ));
        }
    }
    Ok(endpoints)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

pub fn status(args: &ClusterStatusArgs) -> Result<String, Failure> {
    let layout = args.layout.resolve()?;
    let config = config(&args.etcd, &layout, Vec::new(), 10)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Failure::Runtime(format!("cannot start the runtime: {err}")))?;
    let holders = runtime
        .block_on(snowflake_etcd::holders(&config))
        .map_err(|err| Failure::Runtime(err.to_string()))?;
    if args.json {
        let mut line = serde_json::to_string(&holders).unwrap_or_default();
        line.push('\n');
        return Ok(line);
    }
    if holders.is_empty() {
        return Ok(format!("no slots in use in cluster {:?}\n", config.name));
    }
    let mut out = format!(
        "{:<28} {:<20} {:>8}  {:<28} {}\n",
        "slot", "hostname", "pid", "since", "address"
    );
    for h in holders {
        out.push_str(&format!(
            "{:<28} {:<20} {:>8}  {:<28} {}\n",
            h.slot, h.node.hostname, h.node.pid, h.since, h.node.address
        ));
    }
    Ok(out)
}

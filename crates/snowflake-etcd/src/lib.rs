//! Cluster mode: every node leases its own worker slot on etcd, fences itself
//! when it cannot renew the lease, and keeps its generator's high-water mark
//! in etcd so that the next holder of its slot never issues an ID at or
//! below one it issued.
//!
//! Keys, under `/snowflake/{cluster}/`:
//! - `slots/{slot}`: who holds the slot (JSON), attached to the holder's
//!   lease, so it disappears when the holder stops renewing;
//! - `marks/{slot}`: the highest Unix millisecond the slot's holder may issue
//!   up to, written before any ID in that window is issued, only while the
//!   writer still holds the slot (a transaction compares the slot's lease),
//!   and kept after the lease ends so the next holder can read it.
//!
//! Three things make a duplicate impossible, each on its own:
//! 1. slots are claimed with a create-if-absent transaction, so two live
//!    nodes never hold one slot;
//! 2. a node stops issuing at `TTL - margin` after its last renewal was sent,
//!    measured on its monotonic clock, before etcd can give the slot away;
//! 3. a new holder waits until its clock is past the slot's mark, and a
//!    fenced node cannot move the mark, so it cannot issue above it.
#![warn(missing_docs)]

mod mark;
mod slots;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions, GetOptions, PutOptions, TlsOptions, Txn, TxnOp};
use serde::{Deserialize, Serialize};
use snowflake::{Clock, Layout, SharedGenerator, UnixMillis};

pub use slots::{Slot, SlotSpace, slot_space};

/// How a node joins a cluster.
#[derive(Clone)]
pub struct ClusterConfig {
    /// etcd endpoints, e.g. `http://127.0.0.1:2379`.
    pub endpoints: Vec<String>,
    /// The cluster's name: the key prefix that separates clusters.
    pub name: String,
    /// The layout whose node fields are the slots.
    pub layout: Layout,
    /// Node fields the user fixed (e.g. `datacenter=3`): only slots with
    /// these values are claimed.
    pub fixed: Vec<(String, u64)>,
    /// The lease's time to live.
    pub lease_ttl: Duration,
    /// How long before the lease could expire the node stops issuing.
    pub margin: Duration,
    /// Clock step back the generator waits out.
    pub tolerance_ms: u64,
    /// How far ahead the mark is reserved.
    pub reserve_ms: u64,
    /// The clock the generator reads.
    pub clock: Arc<dyn Clock>,
    /// What the slot key says about this node.
    pub info: NodeInfo,
    /// User name and password for etcd, if it requires them.
    pub auth: Option<(String, String)>,
    /// A PEM CA certificate: connect with TLS, trusting it.
    pub ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("endpoints", &self.endpoints)
            .field("name", &self.name)
            .field("layout", &self.layout.name())
            .field("fixed", &self.fixed)
            .field("lease_ttl", &self.lease_ttl)
            .field("margin", &self.margin)
            .field("tls", &self.ca_pem.is_some())
            .field("auth", &self.auth.as_ref().map(|(user, _)| user))
            .finish_non_exhaustive()
    }
}

impl ClusterConfig {
    /// The margin for a TTL when none is given: a quarter of the TTL, at
    /// least 500 ms, leaving time for renewals to fail over.
    pub fn default_margin(ttl: Duration) -> Duration {
        (ttl / 4).max(Duration::from_millis(500)).min(ttl / 2)
    }

    fn prefix(&self) -> String {
        format!("/snowflake/{}/", self.name)
    }
}

/// What a slot's key records about its holder.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct NodeInfo {
    /// The host the node runs on.
    pub hostname: String,
    /// Its process ID.
    pub pid: u32,
    /// Where its API listens.
    pub address: String,
    /// When it claimed the slot, Unix ms (set on claim).
    #[serde(default)]
    pub since_ms: i64,
}

/// A slot in use, as `snowflake cluster status` lists it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SlotHolder {
    /// The slot, e.g. `datacenter=1,machine=7`.
    pub slot: String,
    /// Its holder.
    #[serde(flatten)]
    pub node: NodeInfo,
    /// When it claimed the slot, as a date.
    pub since: String,
    /// The slot's high-water mark, Unix ms.
    pub mark_ms: Option<i64>,
}

/// Why a node cannot issue now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady(pub String);

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A slot held under a lease, and the generator for it.
#[derive(Debug)]
pub struct Holding {
    /// The slot.
    pub slot: Slot,
    /// The generator issuing in it.
    pub generator: Arc<SharedGenerator>,
    lease: i64,
    writer: Arc<mark::MarkWriter>,
}

impl Holding {
    /// Keeps the slot's mark ahead of the clock by the reserve plus the TTL,
    /// topped up at each renewal, off the request path. The generator then
    /// finds its own reservations already durable and never blocks a request
    /// on etcd, not even while etcd elects a new leader; and a node that takes
    /// the slot after the lease expired finds the mark at most the reserve
    /// ahead of its clock.
    async fn keep_mark_ahead(&self, config: &ClusterConfig) {
        let now = config.clock.now_ms();
        let ttl = config.lease_ttl.as_millis() as i64;
        let ahead = config.reserve_ms as i64 + ttl;
        let durable = self.writer.durable.load(Ordering::Acquire);
        if durable - now >= ahead - ttl / 5 {
            return;
        }
        // Never below what the generator itself reserved.
        let floor = self.generator.stats().mark_ms.unwrap_or(0);
        if let Err(err) = self.writer.write((now + ahead).max(floor)).await {
            tracing::warn!(slot = %self.slot, "cannot move the mark ahead: {err}");
        }
    }
}

/// What the node is doing, for `/readyz`, metrics and logs.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterStatus {
    /// The slot held, if any.
    pub slot: Option<String>,
    /// Seconds until the node fences itself unless the lease is renewed.
    pub lease_remaining_s: Option<f64>,
    /// Times the node stopped issuing because it lost or could not renew its lease.
    pub fencing_events: u64,
    /// What it is doing, in words.
    pub state: String,
}

struct Inner {
    config: ClusterConfig,
    holding: RwLock<Option<Arc<Holding>>>,
    /// Nanoseconds after `base` until which the node may issue; 0: never.
    deadline: AtomicU64,
    base: Instant,
    fencing_events: AtomicU64,
    state: Mutex<String>,
    runtime: tokio::runtime::Handle,
    /// The task that keeps the lease; aborted on shutdown so that it does
    /// not take a new lease and slot after the node said goodbye.
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Inner {
    /// The node may issue until `ttl` (as etcd granted or renewed it) minus
    /// the margin after the request was sent: etcd starts the lease's
    /// countdown no earlier than that.
    fn set_deadline(&self, sent: Instant, ttl_s: i64) {
        let ttl = Duration::from_secs(u64::try_from(ttl_s).unwrap_or(0)).min(self.config.lease_ttl);
        let until = sent + ttl.saturating_sub(self.config.margin);
        let nanos = until.saturating_duration_since(self.base).as_nanos() as u64;
        self.deadline.fetch_max(nanos, Ordering::AcqRel);
    }

    fn remaining(&self) -> Option<Duration> {
        let deadline = self.deadline.load(Ordering::Acquire);
        if deadline == 0 {
            return None;
        }
        let now = self.base.elapsed().as_nanos() as u64;
        Some(Duration::from_nanos(deadline.saturating_sub(now)))
    }

    fn fenced(&self) -> bool {
        self.remaining().is_none_or(|left| left.is_zero())
    }

    fn say(&self, state: impl Into<String>) {
        let state = state.into();
        if let Ok(mut current) = self.state.lock()
            && *current != state
        {
            tracing::info!(cluster = %self.config.name, "{state}");
            *current = state;
        }
    }

    /// Stops issuing: drops the generator and the deadline.
    fn fence(&self, why: &str) {
        let had = self.holding.write().map(|mut h| h.take()).ok().flatten();
        self.deadline.store(0, Ordering::Release);
        if let Some(holding) = had {
            self.fencing_events.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(slot = %holding.slot, "fenced: {why}; no more IDs from this slot");
        }
        self.say(format!("not issuing: {why}"));
    }
}

/// A node's membership in a cluster; cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("status", &self.status())
            .finish()
    }
}

impl Cluster {
    /// Joins the cluster in the background on the current tokio runtime:
    /// returns at once; the node is ready when it holds a slot.
    pub fn start(config: ClusterConfig) -> Cluster {
        let inner = Arc::new(Inner {
            config,
            holding: RwLock::new(None),
            deadline: AtomicU64::new(0),
            base: Instant::now(),
            fencing_events: AtomicU64::new(0),
            state: Mutex::new("starting".into()),
            runtime: tokio::runtime::Handle::current(),
            supervisor: Mutex::new(None),
        });
        let task = tokio::spawn(supervise(Arc::clone(&inner)));
        if let Ok(mut slot) = inner.supervisor.lock() {
            *slot = Some(task);
        }
        Cluster { inner }
    }

    /// The slot and generator to issue from, if the node may issue now.
    pub fn current(&self) -> Result<Arc<Holding>, NotReady> {
        let holding = self
            .inner
            .holding
            .read()
            .ok()
            .and_then(|h| h.clone())
            .ok_or_else(|| NotReady(self.state()))?;
        if self.inner.fenced() {
            return Err(NotReady(
                "fenced: the lease on etcd was not renewed in time".into(),
            ));
        }
        Ok(holding)
    }

    /// Whether IDs just made with `holding` may still be handed out: the
    /// lease was renewed in time and the slot is still this node's. A
    /// process paused between `current` and here finds out now.
    pub fn still_valid(&self, holding: &Arc<Holding>) -> bool {
        !self.inner.fenced()
            && self
                .inner
                .holding
                .read()
                .ok()
                .and_then(|h| h.clone())
                .is_some_and(|h| Arc::ptr_eq(&h, holding))
    }

    /// Whether IDs just made with `generator` may still be handed out: the
    /// same check as [`Cluster::still_valid`], for a caller that kept only
    /// the generator.
    pub fn still_issuing(&self, generator: &Arc<SharedGenerator>) -> bool {
        !self.inner.fenced()
            && self
                .inner
                .holding
                .read()
                .ok()
                .and_then(|h| h.clone())
                .is_some_and(|h| Arc::ptr_eq(&h.generator, generator))
    }

    fn state(&self) -> String {
        self.inner
            .state
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// What the node is doing.
    pub fn status(&self) -> ClusterStatus {
        let holding = self.inner.holding.read().ok().and_then(|h| h.clone());
        ClusterStatus {
            slot: holding.as_ref().map(|h| h.slot.to_string()),
            lease_remaining_s: self.inner.remaining().map(|d| d.as_secs_f64()),
            fencing_events: self.inner.fencing_events.load(Ordering::Relaxed),
            state: self.state(),
        }
    }

    /// Leaves the cluster: stops issuing and revokes the lease, which frees
    /// the slot at once. The mark stays, so the next holder starts above it.
    pub async fn shutdown(&self) {
        let lease = self
            .inner
            .holding
            .read()
            .ok()
            .and_then(|h| h.as_ref().map(|h| h.lease));
        if let Some(task) = self.inner.supervisor.lock().ok().and_then(|mut t| t.take()) {
            task.abort();
        }
        self.inner.fence("shutting down");
        if let Some(lease) = lease
            && let Ok(mut client) = connect(&self.inner.config).await
        {
            let _ = client.lease_revoke(lease).await;
        }
    }
}

/// Connects to etcd with the config's TLS and credentials.
pub async fn connect(config: &ClusterConfig) -> Result<Client, etcd_client::Error> {
    let mut options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(2))
        .with_timeout(Duration::from_secs(2))
        .with_keep_alive(Duration::from_secs(1), Duration::from_secs(1));
    if let Some((user, password)) = &config.auth {
        options = options.with_user(user.clone(), password.clone());
    }
    if let Some(pem) = &config.ca_pem {
        options = options
            .with_tls(TlsOptions::new().ca_certificate(etcd_client::Certificate::from_pem(pem)));
    }
    Client::connect(&config.endpoints, Some(options)).await
}

/// Lists the slots in use and their holders.
pub async fn holders(config: &ClusterConfig) -> Result<Vec<SlotHolder>, etcd_client::Error> {
    let mut client = connect(config).await?;
    let prefix = config.prefix();
    let slots = client
        .get(
            format!("{prefix}slots/"),
            Some(GetOptions::new().with_prefix()),
        )
        .await?;
    let marks = client
        .get(
            format!("{prefix}marks/"),
            Some(GetOptions::new().with_prefix()),
        )
        .await?;
    let mut out = Vec::new();
    for kv in slots.kvs() {
        let slot = String::from_utf8_lossy(kv.key())
            .trim_start_matches(&format!("{prefix}slots/"))
            .to_string();
        let Ok(node) = serde_json::from_slice::<NodeInfo>(kv.value()) else {
            continue;
        };
        let mark_key = format!("{prefix}marks/{slot}");
        let mark_ms = marks
            .kvs()
            .iter()
            .find(|m| m.key() == mark_key.as_bytes())
            .and_then(|m| std::str::from_utf8(m.value()).ok()?.trim().parse().ok());
        out.push(SlotHolder {
            since: UnixMillis(node.since_ms).to_string(),
            slot,
            node,
            mark_ms,
        });
    }
    Ok(out)
}

/// How soon a failed renewal is tried again.
const RETRY: Duration = Duration::from_millis(100);

/// Runs sessions forever: each grants a lease, claims a slot, renews the
/// lease; when a session ends the node fences itself and starts another.
async fn supervise(inner: Arc<Inner>) {
    let mut last_lease = None;
    loop {
        let outcome = session(&inner, &mut last_lease).await;
        let why = match outcome {
            Ok(()) => "session ended".to_string(),
            Err(why) => why,
        };
        inner.fence(&why);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn session(inner: &Arc<Inner>, last_lease: &mut Option<i64>) -> Result<(), String> {
    let config = &inner.config;
    let mut client = connect(config)
        .await
        .map_err(|err| format!("cannot reach etcd: {err}"))?;
    // A lease from an earlier session may still hold a slot (etcd extends
    // leases across leader changes); give it up so the slot is free again.
    if let Some(old) = last_lease.take() {
        let _ = client.lease_revoke(old).await;
    }
    let ttl_s = config.lease_ttl.as_secs().max(1) as i64;
    let sent = Instant::now();
    let granted = client
        .lease_grant(ttl_s, None)
        .await
        .map_err(|err| format!("cannot get a lease: {err}"))?;
    let lease = granted.id();
    *last_lease = Some(lease);
    inner.set_deadline(sent, granted.ttl());
    // Renewing five times a TTL leaves most of the TTL, after the margin,
    // for etcd to elect a new leader before the node must fence itself.
    let period = config.lease_ttl / 5;
    // One renewal may take this long before we try again.
    let attempt = (config.lease_ttl / 6).max(Duration::from_millis(200));
    let mut pause = period;
    let mut holding: Option<Arc<Holding>> = None;
    // The renewal stream; dropped after any failure, so that a late answer
    // to an old request is never taken for the answer to a new one.
    let mut renewer = None;
    loop {
        if holding.is_none() {
            match slots::claim(inner, &mut client, lease).await {
                Ok(Some(claimed)) => {
                    let claimed = Arc::new(claimed);
                    inner.say(format!("holding slot {}", claimed.slot));
                    claimed.keep_mark_ahead(config).await;
                    if let Ok(mut h) = inner.holding.write() {
                        *h = Some(Arc::clone(&claimed));
                    }
                    holding = Some(claimed);
                }
                Ok(None) => inner.say(format!(
                    "not issuing: all {} slots are taken",
                    slot_space(&config.layout, &config.fixed)
                        .map(|s| s.len().to_string())
                        .unwrap_or_else(|_| "?".into())
                )),
                Err(why) => inner.say(format!("not issuing: {why}")),
            }
        }
        tokio::time::sleep(pause).await;
        if inner.fenced() {
            return Err("the lease could not be renewed in time".into());
        }
        // Renew; on failure retry soon, through any member, until the
        // deadline: an etcd leader change must not stop a node that is
        // still within its lease.
        let sent = Instant::now();
        let renewed = async {
            let (keeper, stream) = match renewer.as_mut() {
                Some(pair) => pair,
                None => renewer.insert(client.lease_keep_alive(lease).await?),
            };
            keeper.keep_alive().await?;
            stream.message().await
        };
        match tokio::time::timeout(attempt, renewed).await {
            Ok(Ok(Some(resp))) if resp.ttl() > 0 => {
                inner.set_deadline(sent, resp.ttl());
                pause = period;
                if let Some(holding) = &holding {
                    // Off the renewal path: a slow write must not delay
                    // the next renewal.
                    let (holding, config) = (Arc::clone(holding), config.clone());
                    tokio::spawn(async move { holding.keep_mark_ahead(&config).await });
                }
            }
            Ok(Ok(Some(_))) => return Err("the lease expired".into()),
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => {
                pause = RETRY;
                renewer = None;
            }
        }
    }
}

/// Writes the slot key if nobody holds it, attached to `lease`.
async fn create_slot(
    client: &mut Client,
    key: &str,
    info: &NodeInfo,
    lease: i64,
) -> Result<bool, etcd_client::Error> {
    let value = serde_json::to_vec(info).unwrap_or_default();
    let txn = Txn::new()
        .when([etcd_client::Compare::create_revision(
            key,
            etcd_client::CompareOp::Equal,
            0,
        )])
        .and_then([TxnOp::put(
            key,
            value,
            Some(PutOptions::new().with_lease(lease)),
        )]);
    Ok(client.txn(txn).await?.succeeded())
}

/// Deletes the slot key if `lease` still holds it.
async fn release_slot(client: &mut Client, key: &str, lease: i64) {
    let txn = Txn::new()
        .when([etcd_client::Compare::lease(
            key,
            etcd_client::CompareOp::Equal,
            lease,
        )])
        .and_then([TxnOp::delete(key, None)]);
    let _ = client.txn(txn).await;
}

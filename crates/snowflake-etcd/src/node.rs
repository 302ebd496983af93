//! A node's membership in a cluster: the session that keeps a lease and a
//! slot, and what the server asks of it (the generator, whether IDs just
//! made may be handed out, the status).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::claim::claim;
use crate::config::{ClusterConfig, connect};
use crate::error::Error;
use crate::fence::Fence;
use snowflake::SharedGenerator;

use crate::holding::Holding;
use crate::slots::slot_space;

/// Why a node cannot issue now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady(pub String);

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
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
    fence: Arc<Fence>,
    fencing_events: AtomicU64,
    state: Mutex<String>,
    runtime: tokio::runtime::Handle,
    /// The task that keeps the lease; aborted on shutdown so that it does
    /// not take a new lease and slot after the node said goodbye.
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Inner {
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
        self.fence.close();
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
            holding: RwLock::new(None),
            fence: Arc::new(Fence::new(config.lease_ttl, config.margin)),
            fencing_events: AtomicU64::new(0),
            state: Mutex::new("starting".into()),
            runtime: tokio::runtime::Handle::current(),
            supervisor: Mutex::new(None),
            config,
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
        if self.inner.fence.closed() {
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
        self.still_issuing(&holding.generator)
    }

    /// Whether IDs just made with `generator` may still be handed out: the
    /// same check as [`Cluster::still_valid`], for a caller that kept only
    /// the generator (each holding has a generator of its own, so the
    /// generator names the holding).
    pub fn still_issuing(&self, generator: &Arc<SharedGenerator>) -> bool {
        !self.inner.fence.closed()
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
            lease_remaining_s: self.inner.fence.remaining().map(|d| d.as_secs_f64()),
            fencing_events: self.inner.fencing_events.load(Ordering::Relaxed),
            state: self.state(),
        }
    }

    /// Leaves the cluster: stops issuing, lowers the slot's mark to the
    /// last ID issued, and revokes the lease, which frees the slot at once.
    /// The next holder starts above the mark without waiting out the
    /// reserve that was kept ahead of the clock.
    pub async fn shutdown(&self) {
        if let Some(task) = self.inner.supervisor.lock().ok().and_then(|mut t| t.take()) {
            task.abort();
        }
        let holding = self.inner.holding.read().ok().and_then(|h| h.clone());
        self.inner.fence("shutting down");
        let Some(holding) = holding else {
            return;
        };
        match holding.lower_mark_to_last_issued().await {
            Ok(mark_ms) => {
                tracing::info!(slot = %holding.slot, mark_ms, "lowered the mark to the last ID issued")
            }
            // The mark stays where it was: above every ID, only further ahead.
            Err(err) => tracing::warn!(slot = %holding.slot, "cannot lower the mark: {err}"),
        }
        if let Ok(mut client) = connect(&self.inner.config).await {
            let _ = client.lease_revoke(holding.lease()).await;
        }
    }
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
            Err(why) => why.to_string(),
        };
        inner.fence(&why);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn session(inner: &Arc<Inner>, last_lease: &mut Option<i64>) -> Result<(), Error> {
    let config = &inner.config;
    let mut client = connect(config).await?;
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
        .map_err(Error::Grant)?;
    let lease = granted.id();
    *last_lease = Some(lease);
    inner.fence.extend(sent, granted.ttl());
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
            match claim(config, &mut client, lease, &inner.fence, &inner.runtime).await {
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
        if inner.fence.closed() {
            return Err(Error::LeaseNotRenewed);
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
                inner.fence.extend(sent, resp.ttl());
                pause = period;
                if let Some(holding) = &holding {
                    // Off the renewal path: a slow write must not delay
                    // the next renewal.
                    let (holding, config) = (Arc::clone(holding), config.clone());
                    tokio::spawn(async move { holding.keep_mark_ahead(&config).await });
                }
            }
            Ok(Ok(Some(_))) => return Err(Error::LeaseExpired),
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => {
                pause = RETRY;
                renewer = None;
            }
        }
    }
}

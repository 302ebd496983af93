//! A node's membership in a cluster: the session that keeps a lease and a
//! slot, and what the server asks of it (the generator, whether IDs just
//! made may be handed out, the status).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::claim::claim;
use crate::clocks::Clocks;
use crate::config::{ClusterConfig, connect};
use crate::error::Error;
use crate::fence::Fence;
use snowflake::SharedGenerator;

use crate::holding::Holding;
use crate::members::{past_refusals, refused};
use crate::skew::ClockSkew;
use crate::slots::{Slot, slot_space};
use crate::watch::until_lost;

/// Why a node cannot issue now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady {
    reason: String,
    needs_operator: bool,
}

impl NotReady {
    /// Why, in words for the operator.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Whether only an operator can make the node ready (a damaged mark in
    /// etcd): retrying soon will not.
    pub fn needs_operator(&self) -> bool {
        self.needs_operator
    }
}

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
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
    /// How far the other nodes' clocks are from this node's.
    pub clock_skew: ClockSkew,
}

struct Inner {
    config: ClusterConfig,
    /// Shared with `clocks`, which names the slot in what it publishes.
    holding: Arc<RwLock<Option<Arc<Holding>>>>,
    clocks: Arc<Clocks>,
    fence: Arc<Fence>,
    fencing_events: AtomicU64,
    /// What the node is doing, and whether only an operator can change it.
    state: Mutex<(String, bool)>,
    runtime: tokio::runtime::Handle,
    /// The task that keeps the lease; aborted on shutdown so that it does
    /// not take a new lease and slot after the node said goodbye.
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Inner {
    fn new(config: ClusterConfig) -> Inner {
        let holding = Arc::new(RwLock::new(None));
        Inner {
            clocks: Arc::new(Clocks::new(config.clone(), Arc::clone(&holding))),
            holding,
            fence: Arc::new(Fence::new(config.lease_ttl, config.margin())),
            fencing_events: AtomicU64::new(0),
            state: Mutex::new(("starting".into(), false)),
            runtime: tokio::runtime::Handle::current(),
            supervisor: Mutex::new(None),
            config,
        }
    }

    fn say(&self, state: impl Into<String>) {
        self.tell(state.into(), false);
    }

    fn tell(&self, state: String, needs_operator: bool) {
        if let Ok(mut current) = self.state.lock()
            && current.0 != state
        {
            if needs_operator {
                tracing::error!(cluster = %self.config.name, "{state}");
            } else {
                tracing::info!(cluster = %self.config.name, "{state}");
            }
            *current = (state, needs_operator);
        }
    }

    fn holding(&self) -> Option<Arc<Holding>> {
        self.holding.read().ok().and_then(|h| h.clone())
    }

    /// Stops issuing: drops the generator and the deadline.
    fn fence(&self, why: &str) {
        let had = self.holding.write().map(|mut h| h.take()).ok().flatten();
        self.stopped(had, why);
    }

    /// Stops issuing from `holding` if it is still the one issuing; a
    /// newer holding is left alone.
    fn give_up(&self, holding: &Arc<Holding>, why: &str) {
        let had = self.holding.write().ok().and_then(|mut current| {
            let same = current.as_ref().is_some_and(|c| Arc::ptr_eq(c, holding));
            if same { current.take() } else { None }
        });
        if had.is_some() {
            self.stopped(had, why);
        }
    }

    fn stopped(&self, had: Option<Arc<Holding>>, why: &str) {
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
        let inner = Arc::new(Inner::new(config));
        let task = tokio::spawn(supervise(Arc::clone(&inner)));
        if let Ok(mut slot) = inner.supervisor.lock() {
            *slot = Some(task);
        }
        Cluster { inner }
    }

    /// The slot and generator to issue from, if the node may issue now.
    pub fn current(&self) -> Result<Arc<Holding>, NotReady> {
        let holding = self.inner.holding().ok_or_else(|| self.not_ready())?;
        if self.inner.fence.closed() {
            return Err(NotReady {
                reason: "fenced: the lease on etcd was not renewed in time".into(),
                needs_operator: false,
            });
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
                .holding()
                .is_some_and(|h| Arc::ptr_eq(&h.generator, generator))
    }

    fn state(&self) -> String {
        self.not_ready().reason
    }

    fn not_ready(&self) -> NotReady {
        let (reason, needs_operator) = self
            .inner
            .state
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default();
        NotReady {
            reason,
            needs_operator,
        }
    }

    /// What the node is doing.
    pub fn status(&self) -> ClusterStatus {
        let holding = self.inner.holding();
        ClusterStatus {
            slot: holding.as_ref().map(|h| h.slot.to_string()),
            lease_remaining_s: self.inner.fence.remaining().map(|d| d.as_secs_f64()),
            fencing_events: self.inner.fencing_events.load(Ordering::Relaxed),
            state: self.state(),
            clock_skew: self.inner.clocks.report(),
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
        let holding = self.inner.holding();
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
        if let Ok(client) = connect(&self.inner.config).await {
            let _ = revoke(&self.inner.config, &client, holding.lease()).await;
        }
    }
}

/// Revokes `lease`, which deletes the keys attached to it (its slot, its
/// clock) at once.
async fn revoke(config: &ClusterConfig, client: &etcd_client::Client, lease: i64) -> bool {
    let revoked = past_refusals(config.endpoints.len(), || {
        let mut client = client.clone();
        async move { client.lease_revoke(lease).await }
    });
    revoked.await.is_ok()
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

/// The watch on a held slot's key (see `watch`), as a task of its own so
/// that the slot is given up the moment its key goes, whatever the session
/// is waiting for; stopped when the session ends.
struct Watching {
    slot: Slot,
    task: tokio::task::JoinHandle<&'static str>,
}

impl Watching {
    fn start(inner: &Arc<Inner>, holding: &Arc<Holding>, client: &etcd_client::Client) -> Self {
        let (inner, holding) = (Arc::clone(inner), Arc::clone(holding));
        let slot = holding.slot.clone();
        let lost = until_lost(
            client.clone(),
            inner.config.slot_key(&slot),
            holding.lease(),
        );
        let task = tokio::spawn(async move {
            let why = lost.await;
            let gone = Error::SlotLost {
                slot: holding.slot.clone(),
                why,
            };
            inner.give_up(&holding, &gone.to_string());
            why
        });
        Watching { slot, task }
    }

    /// Resolves once the slot was given up, saying why; never without one.
    async fn lost(watching: &mut Option<Watching>) -> Error {
        match watching {
            Some(Watching { slot, task }) => Error::SlotLost {
                slot: slot.clone(),
                why: task.await.unwrap_or("the watch on its key stopped"),
            },
            None => std::future::pending().await,
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn session(inner: &Arc<Inner>, last_lease: &mut Option<i64>) -> Result<(), Error> {
    let config = &inner.config;
    let mut client = connect(config).await?;
    // A lease from an earlier session may still hold a slot (etcd extends
    // leases across leader changes); give it up so the slot is free again.
    if let Some(old) = last_lease.take() {
        let _ = revoke(config, &client, old).await;
    }
    let ttl_s = config.lease_ttl.as_secs().max(1) as i64;
    let sent = Instant::now();
    let granted = past_refusals(config.endpoints.len(), || {
        let mut client = client.clone();
        async move { client.lease_grant(ttl_s, None).await }
    })
    .await
    .map_err(Error::Grant)?;
    let lease = granted.id();
    *last_lease = Some(lease);
    inner.fence.extend(sent, granted.ttl());
    // Publishes this node's clock at each renewal, and measures the others'.
    let publishing = inner.clocks.start(client.clone(), lease);
    // The partition scenario times the fence against these lines.
    tracing::debug!(
        lease,
        ttl_s = granted.ttl(),
        "fence extended: lease granted"
    );
    // Renewing five times a TTL leaves most of the TTL, after the margin,
    // for etcd to elect a new leader before the node must fence itself.
    let period = config.lease_ttl / 5;
    // One renewal may take this long before we try again.
    let attempt = (config.lease_ttl / 6).max(Duration::from_millis(200));
    let mut pause = period;
    let mut holding: Option<Arc<Holding>> = None;
    let mut watching: Option<Watching> = None;
    // The renewal stream; dropped after any failure, so that a late answer
    // to an old request is never taken for the answer to a new one.
    let mut renewer = None;
    // Renewals in a row that a member refused to connect for.
    let mut refusals = 0;
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
                    watching = Some(Watching::start(inner, &claimed, &client));
                    holding = Some(claimed);
                }
                Ok(None) => inner.say(format!(
                    "not issuing: all {} slots are taken",
                    slot_space(&config.layout, &config.fixed)
                        .map(|s| s.len().to_string())
                        .unwrap_or_else(|_| "?".into())
                )),
                Err(why) => inner.tell(format!("not issuing: {why}"), why.needs_operator()),
            }
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            lost = Watching::lost(&mut watching) => return Err(lost),
        }
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
                refusals = 0;
                inner.fence.extend(sent, resp.ttl());
                tracing::debug!(lease, ttl_s = resp.ttl(), "fence extended: lease renewed");
                pause = period;
                publishing.renewed();
                if let Some(holding) = &holding {
                    // Off the renewal path: a slow write must not delay
                    // the next renewal.
                    let (holding, config) = (Arc::clone(holding), config.clone());
                    tokio::spawn(async move { holding.keep_mark_ahead(&config).await });
                }
            }
            Ok(Ok(Some(_))) => return Err(Error::LeaseExpired),
            // A member refused the connection: nothing reached etcd, and the
            // member is avoided now; the next goes to another at once, once
            // for each member in a row (when all refuse, at the usual pace).
            Ok(Err(err)) if refused(&err) && refusals + 1 < config.endpoints.len() => {
                refusals += 1;
                pause = Duration::ZERO;
                renewer = None;
            }
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => {
                refusals = 0;
                pause = RETRY;
                renewer = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use snowflake::{Clock, Generator};

    use super::*;
    use crate::mark::MarkWriter;

    fn config() -> ClusterConfig {
        ClusterConfig::for_tests()
    }

    /// The probe of `cluster status` finds a node's lease from its clock
    /// key: every lease, negative ones too, reads back; other keys do not.
    #[test]
    fn a_clock_key_names_its_lease_back() {
        let config = config();
        for lease in [0, 1, 0x694d_8a9c_1f2e_3a00, i64::MAX, -1, i64::MIN] {
            let key = config.clock_key(lease);
            assert_eq!(
                config.lease_of_clock_key(key.as_bytes()),
                Some(lease),
                "{key}"
            );
        }
        for key in [
            "/snowflake/test/clocks/xyz",
            "/snowflake/other/clocks/01",
            "",
        ] {
            assert_eq!(config.lease_of_clock_key(key.as_bytes()), None, "{key}");
        }
        assert_eq!(config.lease_of_clock_key(&[0xff, 0xfe]), None);
    }

    /// A node with no session: the test moves its fence and its holding
    /// as the session and the watch would.
    fn idle() -> Cluster {
        Cluster {
            inner: Arc::new(Inner::new(config())),
        }
    }

    /// A holding of slot `machine` under `lease`, whose generator is its own.
    async fn holding(machine: u64, lease: i64) -> Arc<Holding> {
        let config = config();
        let client = etcd_client::Client::connect(&config.endpoints, None)
            .await
            .unwrap();
        let slot = Slot(vec![("datacenter".into(), 0), ("machine".into(), machine)]);
        let writer = MarkWriter::new(
            client,
            1,
            config.slot_key(&slot),
            config.mark_key(&slot),
            lease,
        );
        let clock: Arc<dyn Clock> = config.clock;
        let generator = Generator::builder(config.layout)
            .node(&[("datacenter", 0), ("machine", machine)])
            .clock(clock)
            .build()
            .unwrap();
        Arc::new(Holding::new(slot, generator, lease, Arc::new(writer)))
    }

    fn hold(cluster: &Cluster, holding: Option<&Arc<Holding>>) {
        *cluster.inner.holding.write().unwrap() = holding.cloned();
    }

    /// A node that holds `holding`, its fence open as a session opens it.
    fn issuing(holding: &Arc<Holding>) -> Cluster {
        let cluster = idle();
        hold(&cluster, Some(holding));
        cluster.inner.fence.extend(Instant::now(), 2);
        cluster
    }

    /// What the server does with a generator it got from `current()`: makes
    /// an ID, and hands it out only if `still_issuing` still says so.
    fn issue(cluster: &Cluster, generator: &Arc<SharedGenerator>) -> Option<u64> {
        let id = generator.next_id().unwrap().get();
        cluster.still_issuing(generator).then_some(id)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_generator_issues_only_while_the_fence_is_open_and_its_holding_is_current() {
        let first = holding(1, 10).await;
        let cluster = issuing(&first);
        let stale = cluster.current().unwrap().generator.clone();
        assert!(
            issue(&cluster, &stale).is_some(),
            "the holder's own generator"
        );
        assert!(cluster.still_valid(&first));

        // The slot was given up and another taken under a new lease: the
        // fence is open, but the generator made before is not the current one.
        let second = holding(2, 11).await;
        hold(&cluster, Some(&second));
        assert_eq!(
            issue(&cluster, &stale),
            None,
            "a generator of a holding given up"
        );
        assert!(!cluster.still_valid(&first));
        assert!(issue(&cluster, &second.generator).is_some());

        // The holding is still in place but the deadline passed (a pause
        // the session has not noticed yet): nothing from it either.
        let cluster = idle();
        hold(&cluster, Some(&first));
        cluster
            .inner
            .fence
            .extend(Instant::now() - Duration::from_millis(1600), 2);
        assert!(cluster.inner.fence.closed());
        assert_eq!(issue(&cluster, &first.generator), None, "past the deadline");
        assert!(!cluster.still_valid(&first));

        // No holding and no lease.
        let cluster = idle();
        assert_eq!(issue(&cluster, &first.generator), None);
        assert!(cluster.current().is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn giving_up_a_holding_leaves_a_newer_one_alone() {
        let (old, new) = (holding(1, 10).await, holding(2, 11).await);
        let cluster = issuing(&new);
        // A watch of the old holding that fires late.
        cluster.inner.give_up(&old, "its key was deleted");
        assert!(cluster.still_valid(&new));
        assert_eq!(cluster.status().fencing_events, 0);
        cluster
            .inner
            .give_up(&new, "gave up slot datacenter=0,machine=2: gone");
        assert!(!cluster.still_valid(&new));
        assert!(cluster.inner.fence.closed());
        assert_eq!(cluster.status().fencing_events, 1);
        let why = cluster.current().unwrap_err();
        assert!(why.reason().contains("gave up slot"), "{why}");
        assert!(!why.needs_operator());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn fencing_drops_the_holding_closes_the_fence_and_says_why() {
        let held = holding(1, 10).await;
        let cluster = issuing(&held);
        assert_eq!(
            cluster.status().slot.as_deref(),
            Some("datacenter=0,machine=1")
        );
        cluster.inner.fence("the lease expired");
        assert!(cluster.inner.holding().is_none());
        assert!(cluster.inner.fence.closed());
        let status = cluster.status();
        assert_eq!(
            (status.slot, status.fencing_events, status.state.as_str()),
            (None, 1, "not issuing: the lease expired")
        );
        // Fencing again with nothing held is not another event.
        cluster.inner.fence("session ended");
        assert_eq!(cluster.status().fencing_events, 1);
        assert_eq!(cluster.status().state, "not issuing: session ended");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_state_only_an_operator_can_change_says_so() {
        let cluster = idle();
        cluster
            .inner
            .tell("not issuing: a damaged mark".into(), true);
        let why = cluster.current().unwrap_err();
        assert!(why.needs_operator());
        assert_eq!(why.reason(), "not issuing: a damaged mark");
        assert_eq!(why.to_string(), why.reason());
        cluster.inner.say("not issuing: all 1 slots are taken");
        assert!(!cluster.current().unwrap_err().needs_operator());
    }
}

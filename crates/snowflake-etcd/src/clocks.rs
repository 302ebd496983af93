//! Publishing this node's clock with its lease renewals and measuring the
//! other nodes' clocks against it; answering `cluster status`'s probe. The
//! method, and what it assumes, is in `skew`.
//!
//! Each node puts `clocks/{lease}` (attached to its lease, so it goes when
//! the node does) at every renewal, and watches: the whole prefix if it is
//! a referee (its key among the first three), else the referees' keys and
//! its own. Everyone also watches the probe key. The watch is set up again,
//! from now, every few publications and as soon as the first three keys
//! change (one of them goes, or a new one sorts among them), so that the
//! referees are the first three keys. A node chooses first once its own
//! key is in etcd, so that it counts itself.
//!
//! Only a clock key attached to the lease its name gives is a node's (a key
//! written by hand, with no lease or another, is none: it neither counts
//! among the first three nor is measured), and only a publication whose
//! values a clock of the cluster can give is taken in (`Publication::refusal`);
//! a key refused is logged at most once every [`REWARN`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use etcd_client::{
    Client, EventType, GetOptions, KeyValue, PutOptions, WatchOptions, WatchResponse, WatchStream,
};
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, mpsc};

use crate::config::{ClusterConfig, connect};
use crate::error::Error;
use crate::holding::Holding;
use crate::members::past_refusals;
use crate::skew::{
    ClockSkew, Estimates, LONGEST_ROUND_TRIP, Me, Measured, Offset, Peer, Spread, millis,
};

/// How many nodes measure every node.
const REFEREES: usize = 3;
/// How many of this node's last round trips its lag is the longest of.
const LAGS: usize = 8;
/// Publications between two choices of what to watch.
const RECHOOSE: u32 = 10;
/// The least time between two answers to probes: a flood of probes costs
/// at most this many writes.
const ANSWER_GAP: Duration = Duration::from_millis(250);
/// The least time between two warnings of different nodes' clocks.
const REWARN: Duration = Duration::from_secs(60);
/// How soon a failed watch is set up again.
const RETRY: Duration = Duration::from_millis(500);
/// How long one publication may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// How many keys one read for the first three takes at a time: more than
/// three, so that a few keys that are no node's cost no second read.
const PAGE: i64 = 16;
/// How many of this node's own keys, this session's and the ones before,
/// it keeps to know itself by in a referee's spread.
const MINE: usize = 4;
/// The longest host name a publication may give (DNS's limit).
const LONGEST_HOST: usize = 253;

/// A node's clock, as it publishes it.
#[derive(Debug, Serialize, Deserialize)]
struct Publication {
    /// Counts the session's publications, so the node knows its own when
    /// they come back.
    seq: u64,
    /// The node's clock just before the put was sent.
    ms: i64,
    /// How far the node's clock had moved against its monotonic clock when
    /// it read `ms` (see `skew`, "A clock stepped"); 0 from a node that
    /// does not say.
    #[serde(default)]
    drift_ms: f64,
    /// The previous publication, now that its round trip is known.
    #[serde(default)]
    prev: Option<Sent>,
    /// The revision of the probe this publication answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answers: Option<i64>,
    #[serde(flatten)]
    peer: Peer,
    /// A referee's lowest and highest offsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spread: Option<Spread>,
}

/// A publication once answered: its revision, the clock before it was
/// sent, and its round trip.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Sent {
    rev: i64,
    ms: i64,
    rtt_us: u64,
    /// The drift when `ms` was read.
    #[serde(default)]
    drift_ms: f64,
}

impl Publication {
    /// Why no clock of the cluster could have published this, if none
    /// could: a reading or drift outside the layout's time range, a round
    /// trip beyond [`LONGEST_ROUND_TRIP`], a spread's offset or bound that
    /// is not finite or beyond the layout's span, a key of no clock, or a
    /// slot or host name no node has.
    fn refusal(&self, config: &ClusterConfig) -> Option<&'static str> {
        let layout = &config.layout;
        let span = (layout.last_timestamp_ms() - layout.epoch_ms()) as f64;
        let reading = |ms: i64, drift_ms: f64| {
            layout.time_units(ms).is_ok() && drift_ms.is_finite() && drift_ms.abs() <= span
        };
        if !reading(self.ms, self.drift_ms) {
            return Some("a reading outside the layout's time range");
        }
        if let Some(prev) = &self.prev {
            if !reading(prev.ms, prev.drift_ms) {
                return Some("an earlier reading outside the layout's time range");
            }
            if Duration::from_micros(prev.rtt_us) > LONGEST_ROUND_TRIP {
                return Some("a round trip longer than any put takes");
            }
        }
        if !self.peer.names_a_node(layout) {
            return Some("a slot or host name that no node has");
        }
        let far = |measured: &Measured| {
            let Offset {
                offset_ms,
                bound_ms,
            } = measured.offset;
            offset_ms.is_finite()
                && offset_ms.abs() <= span
                && bound_ms.is_finite()
                && (0.0..=span).contains(&bound_ms)
                && measured.peer.names_a_node(layout)
                && config.lease_of_clock_key(measured.key.as_bytes()).is_some()
        };
        match &self.spread {
            Some(spread) if !spread.lo.iter().chain(&spread.hi).all(far) => {
                Some("a spread with an offset no two clocks of the layout can have")
            }
            _ => None,
        }
    }
}

impl Peer {
    /// Whether a node could have published this: a slot of the layout, if
    /// any, and a host name of printable characters, not too long.
    fn names_a_node(&self, layout: &snowflake::Layout) -> bool {
        let slot = self.slot.as_deref().is_none_or(|slot| {
            slot.split(',').all(|part| {
                part.split_once('=').is_some_and(|(name, value)| {
                    let field = layout.node_fields().find(|f| f.name() == name);
                    let value = value.parse::<u64>().ok();
                    field.zip(value).is_some_and(|(f, v)| v <= f.max())
                })
            })
        });
        let host = self.host.len() <= LONGEST_HOST && !self.host.chars().any(char::is_control);
        slot && host
    }
}

/// The lease a clock key is attached to, if it is the one its name gives:
/// only such a key is a node's.
fn lease_of(config: &ClusterConfig, kv: &KeyValue) -> Option<i64> {
    named_lease(config, kv.key(), kv.lease())
}

/// The lease `key` names, if it is `attached`, the one it is attached to.
fn named_lease(config: &ClusterConfig, key: &[u8], attached: i64) -> Option<i64> {
    config
        .lease_of_clock_key(key)
        .filter(|&lease| lease != 0 && lease == attached)
}

/// What a node knows of the other clocks; outlives its sessions.
pub(crate) struct Clocks {
    config: ClusterConfig,
    holding: Arc<RwLock<Option<Arc<Holding>>>>,
    state: Mutex<State>,
    /// The clock and the monotonic clock read together at the start, from
    /// which the drift is counted.
    base: (i64, Instant),
}

#[derive(Default)]
struct State {
    estimates: Estimates,
    /// Whether this node watches every node.
    referee: bool,
    /// This node's clock keys: this session's first, then the ones before.
    mine: VecDeque<String>,
    /// The other nodes whose publications etcd delivered, of those it
    /// watches now.
    delivered: HashSet<String>,
    /// The clock keys present at the last choice: the most nodes there
    /// can be, this one among them.
    keys_present: usize,
    /// The node it last warned of, and when, while the skew is beyond the
    /// bound.
    warned: Option<(Peer, Instant)>,
    /// When it last logged a clock key it refused.
    refused: Option<Instant>,
}

impl Clocks {
    pub(crate) fn new(config: ClusterConfig, holding: Arc<RwLock<Option<Arc<Holding>>>>) -> Self {
        let base = (config.clock.now_ms(), Instant::now());
        Clocks {
            config,
            holding,
            state: Mutex::default(),
            base,
        }
    }

    /// How far the clock, reading `ms` at `at`, has moved against the
    /// monotonic clock since the start: 0 until it is stepped or slewed.
    fn drift(&self, ms: i64, at: Instant) -> f64 {
        let (base_ms, base) = self.base;
        (ms - base_ms) as f64 - millis(at.saturating_duration_since(base))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The node's view of the other clocks now.
    pub(crate) fn report(&self) -> ClockSkew {
        let drift_ms = self.drift(self.config.clock.now_ms(), Instant::now());
        let state = self.state();
        let mine: Vec<String> = state.mine.iter().cloned().collect();
        let me = Me {
            keys: &mine,
            referee: state.referee,
            drift_ms,
            others_at_most: state.keys_present.saturating_sub(1),
        };
        let mut report = state.estimates.report(me, self.config.max_clock_skew_ms);
        report.watched = state.delivered.len();
        report
    }

    /// Logs that the clock key `key` was not taken in, and why, at most
    /// once every [`REWARN`]: anyone who may write the keys may write many.
    fn refused(&self, key: &[u8], why: &str) {
        let mut state = self.state();
        if state.refused.is_some_and(|at| at.elapsed() < REWARN) {
            return;
        }
        state.refused = Some(Instant::now());
        let shown: String = String::from_utf8_lossy(key).chars().take(80).collect();
        tracing::warn!(
            cluster = %self.config.name,
            "ignored the clock key {shown:?}: {why} (a key written by hand or by a \
             client that is no node of this version; more are not logged for a minute)"
        );
    }

    /// Warns when some clock is certainly further off than allowed, and
    /// says when that is over. While it lasts, a different node being the
    /// furthest is warned of at most once every [`REWARN`]: two nodes about
    /// as far off take turns as the furthest, and must not flood the log.
    fn check(&self) {
        let report = self.report();
        let mut state = self.state();
        let beyond = report.beyond().then(|| report.peer.clone()).flatten();
        let warn = match (&state.warned, &beyond) {
            (None, Some(_)) => true,
            (Some((warned, at)), Some(peer)) => warned != peer && at.elapsed() >= REWARN,
            _ => false,
        };
        if let (true, Some(peer)) = (warn, beyond.clone()) {
            tracing::warn!(
                cluster = %self.config.name,
                offset_ms = report.max_offset_ms,
                bound_ms = report.bound_ms,
                max_clock_skew_ms = self.config.max_clock_skew_ms,
                "the clock of {peer} is {:+.1} ms (± {:.1} ms) from this node's, beyond \
                 --max-clock-skew-ms {}: IDs from the two do not sort by time",
                report.max_offset_ms.unwrap_or_default(),
                report.bound_ms.unwrap_or_default(),
                self.config.max_clock_skew_ms,
            );
            state.warned = Some((peer, Instant::now()));
        } else if beyond.is_none() && state.warned.take().is_some() {
            tracing::info!(
                cluster = %self.config.name,
                "the nodes' clocks agree again within --max-clock-skew-ms {}",
                self.config.max_clock_skew_ms
            );
        }
    }

    /// Publishes and measures for the session holding `lease`, until the
    /// returned handle is dropped.
    pub(crate) fn start(self: &Arc<Self>, client: Client, lease: i64) -> Publishing {
        let renewed = Arc::new(Notify::new());
        let (done, answered) = mpsc::channel(4);
        let me = self.config.clock_key(lease);
        {
            let mut state = self.state();
            state.mine.push_front(me.clone());
            state.mine.truncate(MINE);
        }
        let session = Session {
            me,
            firsts: Vec::new(),
            clocks: Arc::clone(self),
            client,
            lease,
            seq: 0,
            prev: None,
            in_flight: false,
            again: false,
            probe: None,
            answered_probe: None,
            pending: HashMap::new(),
            lags: VecDeque::new(),
            last_seen: HashMap::new(),
            done,
        };
        Publishing {
            task: tokio::spawn(session.run(Arc::clone(&renewed), answered)),
            renewed,
        }
    }
}

/// A session's publishing and measuring; stopped when dropped.
pub(crate) struct Publishing {
    task: tokio::task::JoinHandle<()>,
    renewed: Arc<Notify>,
}

impl Publishing {
    /// The lease was renewed: time to publish.
    pub(crate) fn renewed(&self) {
        self.renewed.notify_one();
    }
}

impl Drop for Publishing {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Why the watch is set up again.
enum Next {
    Continue,
    Rechoose,
}

struct Session {
    clocks: Arc<Clocks>,
    client: Client,
    lease: i64,
    /// This node's key.
    me: String,
    /// The first keys (at most [`REFEREES`]), in order, as last chosen.
    firsts: Vec<String>,
    seq: u64,
    /// The last publication answered, for the next to carry.
    prev: Option<Sent>,
    in_flight: bool,
    /// A renewal came while a publication was in flight.
    again: bool,
    /// A probe to answer.
    probe: Option<i64>,
    answered_probe: Option<Instant>,
    /// This node's publications not yet seen coming back, by `seq`.
    pending: HashMap<u64, Instant>,
    /// How long this node's last publications took to come back.
    lags: VecDeque<Duration>,
    /// Each watched key's last publication: its revision, when it came,
    /// and this node's drift then.
    last_seen: HashMap<String, (i64, i64, f64)>,
    done: mpsc::Sender<Option<Sent>>,
}

impl Session {
    async fn run(mut self, renewed: Arc<Notify>, mut answered: mpsc::Receiver<Option<Sent>>) {
        self.publish(None);
        // Choose once this node's own key is in etcd (or its put failed):
        // before, the node would not count itself among the first three.
        if let Some(sent) = answered.recv().await {
            self.prev = sent;
            self.in_flight = false;
        }
        loop {
            let Some(mut stream) = self.watch().await else {
                tokio::time::sleep(RETRY).await;
                continue;
            };
            let mut published = 0;
            loop {
                let answer_at = self
                    .answered_probe
                    .map_or_else(Instant::now, |at| at + ANSWER_GAP);
                let may_answer = self.probe.is_some() && !self.in_flight;
                tokio::select! {
                    () = renewed.notified() => {
                        self.due();
                        self.clocks.check();
                        published += 1;
                        if published >= RECHOOSE {
                            break;
                        }
                    }
                    Some(sent) = answered.recv() => {
                        self.prev = sent;
                        self.in_flight = false;
                        if std::mem::take(&mut self.again) {
                            self.publish(None);
                        }
                    }
                    () = tokio::time::sleep_until(answer_at.into()), if may_answer => {
                        let probe = self.probe.take();
                        self.answered_probe = Some(Instant::now());
                        self.publish(probe);
                    }
                    message = stream.message() => {
                        // Read before anything else: this is when it came.
                        let (ms, at) = (self.clocks.config.clock.now_ms(), Instant::now());
                        match message {
                            Ok(Some(response)) if !response.canceled() => {
                                if let Next::Rechoose = self.received(&response, ms, at) {
                                    break;
                                }
                            }
                            // Ended, cancelled (compacted), or etcd unreachable.
                            _ => break,
                        }
                    }
                }
            }
        }
    }

    /// A renewal: publish now, or once the publication in flight is answered.
    fn due(&mut self) {
        if self.in_flight {
            self.again = true;
        } else {
            self.publish(None);
        }
    }

    /// Puts this node's clock, read just before sending, in a task of its
    /// own: the watch must be read as messages come, not after a put.
    fn publish(&mut self, answers: Option<i64>) {
        self.seq += 1;
        self.in_flight = true;
        // Noted before the put is sent: the lag measured is, if anything,
        // too long, which widens the bound.
        self.pending.insert(self.seq, Instant::now());
        let oldest = self.seq.saturating_sub(4);
        self.pending.retain(|seq, _| *seq > oldest);
        let (spread, slot) = {
            let state = self.clocks.state();
            let drift_ms = self
                .clocks
                .drift(self.clocks.config.clock.now_ms(), Instant::now());
            let spread = state.referee.then(|| state.estimates.spread(drift_ms));
            let slot = self
                .clocks
                .holding
                .read()
                .ok()
                .and_then(|h| h.as_ref().map(|h| h.slot.to_string()));
            (spread, slot)
        };
        let mut publication = Publication {
            seq: self.seq,
            ms: 0,
            drift_ms: 0.0,
            prev: self.prev.take(),
            answers,
            peer: Peer {
                slot,
                host: self.clocks.config.info.hostname.clone(),
            },
            spread,
        };
        let (mut client, key, lease) = (self.client.clone(), self.me.clone(), self.lease);
        let clocks = Arc::clone(&self.clocks);
        let done = self.done.clone();
        tokio::spawn(async move {
            publication.ms = clocks.config.clock.now_ms();
            let started = Instant::now();
            publication.drift_ms = clocks.drift(publication.ms, started);
            let value = serde_json::to_vec(&publication).unwrap_or_default();
            let options = PutOptions::new().with_lease(lease);
            let put = tokio::time::timeout(CALL_TIMEOUT, client.put(key, value, Some(options)));
            let sent = match put.await {
                Ok(Ok(response)) => response.header().map(|h| Sent {
                    rev: h.revision(),
                    ms: publication.ms,
                    rtt_us: started.elapsed().as_micros() as u64,
                    drift_ms: publication.drift_ms,
                }),
                _ => None,
            };
            let _ = done.send(sent).await;
        });
    }

    /// Chooses what to watch (see the module's documentation), watches it
    /// from now, and forgets the nodes that went meanwhile.
    ///
    /// Never from a past revision: a watch that starts in etcd's history is
    /// kept apart until it has caught up, and what it brings meanwhile,
    /// even writes made after it started, comes in batches up to a tenth of
    /// a second late. A receipt time from such a watch breaks the one
    /// assumption of `skew`: the scenarios measured offsets tens of
    /// milliseconds outside their bound that way. What is written between
    /// the choice and the watch is missed: one sample less.
    async fn watch(&mut self) -> Option<WatchStream> {
        let prefix = self.clocks.config.clocks_prefix();
        let probe_key = self.clocks.config.probe_key();
        let (firsts, count) = self.first_keys(&prefix).await?;
        let watch = choose(&firsts, &self.me);
        let (watched, read) = match &watch {
            Watch::Everyone => (
                WatchOptions::new().with_prefix(),
                GetOptions::new().with_prefix(),
            ),
            Watch::Referees { until } => (
                WatchOptions::new().with_range(until.as_str()),
                GetOptions::new().with_range(until.as_str()),
            ),
        };
        let watching = self.client.watch(prefix.as_str(), Some(watched));
        let mut stream = tokio::time::timeout(CALL_TIMEOUT, watching)
            .await
            .ok()?
            .ok()?;
        if let Watch::Referees { .. } = watch {
            stream.watch(self.me.clone(), None).await.ok()?;
        }
        stream.watch(probe_key, None).await.ok()?;
        // Read once the watch is asked for: a node gone before is not
        // listed, one gone after comes as an event (at worst, one gone in
        // between is forgotten at the next choice).
        let clocks = Arc::clone(&self.clocks);
        let present: HashSet<String> = self
            .get(&prefix, read.with_keys_only())
            .await?
            .kvs()
            .iter()
            .filter(|kv| lease_of(&clocks.config, kv).is_some())
            .map(|kv| String::from_utf8_lossy(kv.key()).into_owned())
            .collect();
        self.last_seen.retain(|key, _| present.contains(key));
        self.firsts = firsts;
        let mut state = clocks.state();
        state.estimates.keep_only(|key| present.contains(key));
        state.referee = watch == Watch::Everyone;
        state.delivered.retain(|key| present.contains(key));
        // A referee reads every key: the nodes there are. Any other node
        // knows only how many keys there are, nodes' or not.
        state.keys_present = match watch {
            Watch::Everyone => present.len(),
            Watch::Referees { .. } => count,
        };
        Some(stream)
    }

    /// The first [`REFEREES`] keys that are nodes' (attached to the lease
    /// they name, holding what a clock can publish), in order, read a page
    /// at a time past any that are not; and how many keys there are under
    /// `prefix`, nodes' or not. A key under a lease of its own that holds
    /// no publication (a lease can be granted with any ID, so such a key
    /// can sort first) would be a referee that measures nobody.
    async fn first_keys(&mut self, prefix: &str) -> Option<(Vec<String>, usize)> {
        let end = range_end(prefix);
        let mut from = prefix.to_string();
        let mut firsts = Vec::new();
        let mut count = None;
        loop {
            let page = GetOptions::new().with_range(end.as_str()).with_limit(PAGE);
            let read = self.get(&from, page).await?;
            count.get_or_insert(read.count().max(0) as usize);
            let config = &self.clocks.config;
            for kv in read.kvs() {
                let publishes = serde_json::from_slice::<Publication>(kv.value())
                    .is_ok_and(|publication| publication.refusal(config).is_none());
                if lease_of(config, kv).is_some() && publishes {
                    firsts.push(String::from_utf8_lossy(kv.key()).into_owned());
                    if firsts.len() == REFEREES {
                        return Some((firsts, count?));
                    }
                }
            }
            match read.kvs().last() {
                Some(last) if read.more() => {
                    from = format!("{}\0", String::from_utf8_lossy(last.key()));
                }
                _ => return Some((firsts, count?)),
            }
        }
    }

    async fn get(&mut self, key: &str, options: GetOptions) -> Option<etcd_client::GetResponse> {
        let read = self.client.get(key, Some(options));
        tokio::time::timeout(CALL_TIMEOUT, read).await.ok()?.ok()
    }

    /// Takes in what the watch brought at `ms` (this node's clock) and `at`.
    fn received(&mut self, response: &WatchResponse, ms: i64, at: Instant) -> Next {
        let clocks = Arc::clone(&self.clocks);
        let config = &clocks.config;
        let (prefix, probe_key) = (config.clocks_prefix(), config.probe_key());
        let drift_ms = clocks.drift(ms, at);
        let mut next = Next::Continue;
        for event in response.events() {
            let Some(kv) = event.kv() else { continue };
            let key = String::from_utf8_lossy(kv.key());
            if key == probe_key {
                if event.event_type() == EventType::Put {
                    self.probe = Some(kv.mod_revision());
                }
                continue;
            }
            if !key.starts_with(&prefix) {
                continue;
            }
            if event.event_type() == EventType::Delete {
                let mut state = clocks.state();
                state.estimates.forget(&key);
                state.delivered.remove(key.as_ref());
                self.last_seen.remove(key.as_ref());
                if self.firsts.iter().any(|first| *first == key) {
                    // One of the first three went: the next is a referee.
                    next = Next::Rechoose;
                }
                continue;
            }
            // A key attached to no lease, or to another than its name
            // gives, is no node's, whatever it holds.
            if lease_of(config, kv).is_none() {
                clocks.refused(kv.key(), "not attached to the lease its name gives");
                continue;
            }
            // What etcd holds is not trusted: a value that is not a
            // publication, or one no clock could give, is no measurement.
            let Ok(publication) = serde_json::from_slice::<Publication>(kv.value()) else {
                clocks.refused(kv.key(), "not a clock publication");
                continue;
            };
            if let Some(why) = publication.refusal(config) {
                clocks.refused(kv.key(), why);
                continue;
            }
            if kv.version() == 1 && joins(&self.firsts, &key) {
                next = Next::Rechoose;
            }
            if key == self.me {
                if let Some(sent) = self.pending.remove(&publication.seq) {
                    if self.lags.len() == LAGS {
                        self.lags.pop_front();
                    }
                    self.lags.push_back(at - sent);
                }
                continue;
            }
            // The longest of the last few: one quick round must not make
            // every delivery look late.
            let lag = self.lags.iter().max().copied();
            let sample = match (publication.prev, self.last_seen.get(key.as_ref()), lag) {
                (Some(prev), Some(&(rev, received_ms, drift_ms)), Some(lag)) if prev.rev == rev => {
                    Some(sample(&prev, received_ms, drift_ms, lag))
                }
                _ => None,
            };
            self.last_seen
                .insert(key.to_string(), (kv.mod_revision(), ms, drift_ms));
            let mut state = clocks.state();
            state.delivered.insert(key.to_string());
            state
                .estimates
                .heard(&key, publication.peer, publication.drift_ms, sample);
            if !state.referee {
                state.estimates.spread_of(&key, publication.spread);
            }
        }
        next
    }
}

/// The sample of a publication `prev`, received at `received_ms` when this
/// node's drift was `drift_ms`, its own writes coming back within `lag`:
/// with both drifts taken out (see `skew`, "A clock stepped").
fn sample(prev: &Sent, received_ms: i64, drift_ms: f64, lag: Duration) -> Offset {
    let rtt = Duration::from_micros(prev.rtt_us);
    Offset::from_delivery(prev.ms, rtt, received_ms, lag).shifted(drift_ms - prev.drift_ms)
}

/// Whether a new node's `key` is among the first keys, as `firsts` were:
/// then they changed, and the referees with them.
fn joins(firsts: &[String], key: &str) -> bool {
    firsts.len() < REFEREES || firsts.iter().any(|first| key < first.as_str())
}

/// What a node watches of the clock keys.
#[derive(Debug, PartialEq, Eq)]
enum Watch {
    /// Every key: the node is a referee.
    Everyone,
    /// The referees' keys, the range up to `until` (past the last of them),
    /// and its own.
    Referees { until: String },
}

/// What the node whose key is `me` watches, given the first keys in order
/// (at most [`REFEREES`]): everyone if it is among them, or if there are
/// fewer; else the referees.
fn choose(firsts: &[String], me: &str) -> Watch {
    match firsts.last() {
        Some(last) if firsts.len() == REFEREES && !firsts.iter().any(|first| first == me) => {
            Watch::Referees {
                until: format!("{last}\0"),
            }
        }
        _ => Watch::Everyone,
    }
}

/// The end of the range of the keys under `prefix`: the prefix with its
/// last byte one higher.
fn range_end(prefix: &str) -> String {
    let mut end = prefix.as_bytes().to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    String::from_utf8_lossy(&end).into_owned()
}

/// How long `cluster status` waits for the nodes to answer its probe.
pub const PROBE_WAIT: Duration = Duration::from_secs(2);

/// Asks every node for its clock now, and measures the clocks of the nodes
/// under `leases` against this machine's (see `skew`, "`cluster status`: a
/// probe"). Waits until all have answered or `within`, counted from the
/// call, has passed; a node that did not answer is left out, and etcd not
/// answering in time is an error. Writes, then deletes, the probe key, so
/// it needs write access to the cluster's keys.
pub async fn probe_clocks(
    config: &ClusterConfig,
    leases: &[i64],
    within: Duration,
) -> Result<HashMap<i64, Offset>, Error> {
    let deadline = tokio::time::Instant::now() + within;
    let late = || {
        Error::Probe(etcd_client::Error::WatchError(
            "etcd did not answer in time".into(),
        ))
    };
    let client = connect(config).await?;
    let prefix = config.clocks_prefix();
    let members = config.endpoints.len();
    let watch = past_refusals(members, || {
        let (mut client, prefix) = (client.clone(), prefix.clone());
        async move {
            let options = WatchOptions::new().with_prefix();
            client.watch(prefix, Some(options)).await
        }
    });
    let mut stream = tokio::time::timeout_at(deadline, watch)
        .await
        .map_err(|_| late())?
        .map_err(Error::Probe)?;
    // The watch's first message says it is in place: no answer is missed.
    tokio::time::timeout_at(deadline, stream.message())
        .await
        .map_err(|_| late())?
        .map_err(Error::Probe)?;
    let sent_ms = config.clock.now_ms();
    let put = past_refusals(members, || {
        let (mut client, key) = (client.clone(), config.probe_key());
        async move { client.put(key, "", None).await }
    });
    let probe = tokio::time::timeout_at(deadline, put)
        .await
        .map_err(|_| late())?
        .map_err(Error::Probe)?;
    let revision = probe.header().map(|h| h.revision()).unwrap_or_default();
    let mut offsets = HashMap::new();
    while leases.iter().any(|lease| !offsets.contains_key(lease)) {
        let message = match tokio::time::timeout_at(deadline, stream.message()).await {
            Ok(Ok(Some(message))) => message,
            _ => break,
        };
        let received_ms = config.clock.now_ms();
        for event in message.events() {
            let Some(kv) = event.kv() else { continue };
            // Only a node's own key counts, and only what a clock can say.
            let lease = lease_of(config, kv);
            let publication = serde_json::from_slice::<Publication>(kv.value()).ok();
            if let (Some(lease), Some(publication)) = (lease, publication)
                && publication.answers == Some(revision)
                && publication.refusal(config).is_none()
            {
                let offset = Offset::from_probe(publication.ms, sent_ms, received_ms);
                offsets.insert(lease, offset);
            }
        }
    }
    let delete = past_refusals(members, || {
        let (mut client, key) = (client.clone(), config.probe_key());
        async move { client.delete(key, None).await }
    });
    let _ = delete.await;
    Ok(offsets)
}

#[cfg(test)]
mod tests {
    use snowflake::Layout;

    use super::*;

    fn config() -> ClusterConfig {
        ClusterConfig::for_tests()
    }

    fn measured(offset_ms: f64, bound_ms: f64, key: &str) -> Measured {
        Measured {
            offset: Offset {
                offset_ms,
                bound_ms,
            },
            peer: Peer {
                slot: Some("datacenter=1,machine=3".into()),
                host: "h".into(),
            },
            key: key.into(),
        }
    }

    fn publication() -> Publication {
        Publication {
            seq: 3,
            ms: 1_700_000_000_123,
            drift_ms: -2.5,
            prev: Some(Sent {
                rev: 42,
                ms: 1_700_000_000_000,
                rtt_us: 850,
                drift_ms: -2.5,
            }),
            answers: None,
            peer: Peer {
                slot: Some("datacenter=1,machine=2".into()),
                host: "h".into(),
            },
            spread: None,
        }
    }

    #[test]
    fn a_publication_reads_back_and_anything_else_is_no_measurement() {
        let publication = publication();
        let json = serde_json::to_string(&publication).unwrap();
        assert!(
            !json.contains("answers") && !json.contains("spread"),
            "{json}"
        );
        let back: Publication = serde_json::from_str(&json).unwrap();
        assert_eq!(back.prev.unwrap().rtt_us, 850);
        assert_eq!(back.prev.unwrap().drift_ms, -2.5);
        assert_eq!(back.peer.slot.as_deref(), Some("datacenter=1,machine=2"));
        for garbage in [&b""[..], b"garbage", b"{}", br#"{"seq":-1,"ms":0}"#] {
            assert!(serde_json::from_slice::<Publication>(garbage).is_err());
        }
        // A node of an older version says no drift: it never stepped.
        let old = r#"{"seq":1,"ms":1700000000000,"prev":{"rev":1,"ms":1700000000000,"rtt_us":9}}"#;
        let old: Publication = serde_json::from_str(old).unwrap();
        assert_eq!((old.drift_ms, old.prev.unwrap().drift_ms), (0.0, 0.0));
        // 1e400 is no number JSON can carry into an f64.
        let huge = r#"{"seq":1,"ms":1700000000000,"drift_ms":1e400}"#;
        assert!(serde_json::from_str::<Publication>(huge).is_err());
    }

    /// Finding 8 of issue 25, value by value: what no clock of the cluster
    /// can say is refused; an honest publication, a referee's too, is not.
    #[test]
    fn a_publication_no_clock_could_give_is_refused() {
        let config = config();
        assert_eq!(publication().refusal(&config), None);
        let key = config.clock_key(7);
        let mut honest = publication();
        honest.spread = Some(Spread {
            n: 1_000_000,
            lo: Some(measured(-3.0, 1.5, &key)),
            hi: Some(measured(500.0, 2.0, &key)),
        });
        // A count is not refused, only cut to the keys present when
        // reported (`skew`): a node that joined since the last choice
        // must not make an honest referee's publications refused.
        assert_eq!(honest.refusal(&config), None);
        let twitter = Layout::twitter();
        type Spoil = fn(&mut Publication);
        let refused: &[(&str, Spoil)] = &[
            ("a reading before the epoch", |p| p.ms = 0),
            ("a reading past the layout's end", |p| p.ms = i64::MAX),
            ("a drift beyond the span", |p| p.drift_ms = 1e300),
            ("an earlier reading before the epoch", |p| {
                p.prev.as_mut().unwrap().ms = -1
            }),
            ("an earlier drift not finite", |p| {
                p.prev.as_mut().unwrap().drift_ms = f64::INFINITY
            }),
            ("a round trip of a day", |p| {
                p.prev.as_mut().unwrap().rtt_us = 86_400_000_000
            }),
            ("a host that forges a log line", |p| {
                p.peer.host = "h\n2026-01-01 WARN forged".into()
            }),
            ("a host of a megabyte", |p| {
                p.peer.host = "h".repeat(1 << 20)
            }),
            ("a slot of no node field", |p| {
                p.peer.slot = Some("rack=1".into())
            }),
            ("a slot out of range", |p| {
                p.peer.slot = Some("datacenter=32,machine=1".into())
            }),
            ("a spread offset of 1e300", |p| {
                let far = measured(1e300, 0.0, "/snowflake/test/clocks/0000000000000007");
                p.spread = Some(Spread {
                    n: 3,
                    lo: None,
                    hi: Some(far),
                });
            }),
            ("a spread entry with no clock key", |p| {
                let far = measured(1.0, 0.5, "/snowflake/other/clocks/07");
                p.spread = Some(Spread {
                    n: 3,
                    lo: Some(far),
                    hi: None,
                });
            }),
        ];
        for (what, spoil) in refused {
            let mut publication = publication();
            spoil(&mut publication);
            assert!(publication.refusal(&config).is_some(), "{what}: taken in");
        }
        for (offset_ms, bound_ms) in [(f64::NAN, 1.0), (1.0, f64::NAN), (1.0, -1.0)] {
            let mut publication = publication();
            let far = measured(offset_ms, bound_ms, &key);
            publication.spread = Some(Spread {
                n: 1,
                lo: Some(far),
                hi: None,
            });
            assert!(
                publication.refusal(&config).is_some(),
                "{offset_ms} ± {bound_ms}"
            );
        }
        // The most two clocks of the layout can differ by is taken in.
        let span = (twitter.last_timestamp_ms() - twitter.epoch_ms()) as f64;
        let mut widest = publication();
        widest.spread = Some(Spread {
            n: 1,
            lo: Some(measured(-span, span, &key)),
            hi: None,
        });
        assert_eq!(widest.refusal(&config), None);
    }

    #[test]
    fn only_a_key_attached_to_the_lease_it_names_is_a_nodes() {
        let config = config();
        let key = config.clock_key(0x694d_8a9c_1f2e_3a00);
        assert_eq!(
            named_lease(&config, key.as_bytes(), 0x694d_8a9c_1f2e_3a00),
            Some(0x694d_8a9c_1f2e_3a00)
        );
        // Written with no lease, or under another lease than it names.
        assert_eq!(named_lease(&config, key.as_bytes(), 0), None);
        assert_eq!(named_lease(&config, key.as_bytes(), 5), None);
        // A key naming lease 0 is no node's, whatever it is attached to.
        assert_eq!(
            named_lease(&config, config.clock_key(0).as_bytes(), 0),
            None
        );
        assert_eq!(named_lease(&config, b"/snowflake/test/clocks/zz", 5), None);
    }

    /// Finding 12 of issue 25: a node that is not among the first three
    /// keys watches only the range up to the third (the referees) and
    /// nothing after it, so that etcd delivers it three nodes' clocks, not
    /// every node's; one among them, or in a cluster of three or fewer,
    /// watches everyone.
    #[test]
    fn only_the_first_three_keys_watch_everyone() {
        let keys: Vec<String> = (1..=5).map(|n| format!("/c/{n:016x}")).collect();
        let firsts = &keys[..3];
        for me in &keys[..3] {
            assert_eq!(choose(firsts, me), Watch::Everyone, "{me}");
        }
        for me in &keys[3..] {
            let Watch::Referees { until } = choose(firsts, me) else {
                panic!("{me} watches everyone");
            };
            // The range [prefix, until) holds the referees and no other.
            let watched: Vec<&String> = keys
                .iter()
                .filter(|k| k.as_str() < until.as_str())
                .collect();
            assert_eq!(watched, firsts.iter().collect::<Vec<_>>(), "{me}");
        }
        // Fewer than three keys (a small cluster, or one starting): all
        // referees.
        assert_eq!(choose(&keys[..2], &keys[4]), Watch::Everyone);
        assert_eq!(choose(&[], &keys[0]), Watch::Everyone);
    }

    /// The same publication, delivered the same way, before and after
    /// either clock is stepped, makes the same sample once the drifts are
    /// taken out: the offset of the two monotonic clocks, the steps added
    /// back only when reported.
    #[test]
    fn a_sample_is_the_same_whichever_clock_was_stepped() {
        let lag = Duration::from_millis(8);
        // The writer 500 ms ahead, neither clock stepped (the hand-worked
        // case of `skew`'s tests).
        let sent = |ms, drift_ms| Sent {
            rev: 1,
            ms,
            rtt_us: 6_000,
            drift_ms,
        };
        let before = sample(&sent(10_500, 0.0), 10_005, 0.0, lag);
        assert_eq!((before.offset_ms, before.bound_ms), (502.0, 8.0));
        // The writer's clock stepped 800 ms back: it reads 9,700 and says
        // its drift is -800.
        let writer_back = sample(&sent(9_700, -800.0), 10_005, 0.0, lag);
        // This node's clock stepped 300 ms ahead: it receives at 10,305.
        let mine_ahead = sample(&sent(10_500, 0.0), 10_305, 300.0, lag);
        let both = sample(&sent(9_700, -800.0), 10_305, 300.0, lag);
        for after in [writer_back, mine_ahead, both] {
            assert_eq!(after, before);
        }
    }

    /// A node joining among the first three makes everyone choose again at
    /// once: one referee is no more, or (fewer than three) one more node is
    /// one; a node joining after them changes nothing.
    #[test]
    fn a_new_key_among_the_first_three_changes_them() {
        let keys: Vec<String> = (1..=5).map(|n| format!("/c/{:016x}", n * 10)).collect();
        let firsts = &keys[..3];
        assert!(joins(firsts, "/c/0000000000000005"));
        assert!(joins(firsts, "/c/0000000000000015"));
        assert!(!joins(firsts, "/c/0000000000000035"));
        assert!(joins(&keys[..2], "/c/0000000000000099"));
    }

    #[test]
    fn the_range_of_a_prefix_ends_just_past_it() {
        assert_eq!(
            range_end("/snowflake/test/clocks/"),
            "/snowflake/test/clocks0"
        );
        assert!("/snowflake/test/clocks/ffffffffffffffff" < "/snowflake/test/clocks0");
        assert!("/snowflake/test/clocks0" > "/snowflake/test/clocks/\u{7f}");
    }
}

//! Publishing this node's clock with its lease renewals and measuring the
//! other nodes' clocks against it; answering `cluster status`'s probe. The
//! method, and what it assumes, is in `skew`.
//!
//! Each node puts `clocks/{lease}` (attached to its lease, so it goes when
//! the node does) at every renewal, and watches: the whole prefix if it is
//! a referee (its key among the first three), else the referees' keys and
//! its own. Everyone also watches the probe key. The watch is set up again,
//! from now, every few publications and when a referee's key goes, so that
//! the referees are the first three keys.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use etcd_client::{
    Client, EventType, GetOptions, PutOptions, WatchOptions, WatchResponse, WatchStream,
};
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, mpsc};

use crate::config::{ClusterConfig, connect};
use crate::error::Error;
use crate::holding::Holding;
use crate::members::past_refusals;
use crate::skew::{ClockSkew, Estimates, Measured, Offset, Peer, Spread};

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

/// A node's clock, as it publishes it.
#[derive(Debug, Serialize, Deserialize)]
struct Publication {
    /// Counts the session's publications, so the node knows its own when
    /// they come back.
    seq: u64,
    /// The node's clock just before the put was sent.
    ms: i64,
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
}

/// What a node knows of the other clocks; outlives its sessions.
pub(crate) struct Clocks {
    config: ClusterConfig,
    holding: Arc<RwLock<Option<Arc<Holding>>>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    estimates: Estimates,
    /// Whether this node watches every node.
    referee: bool,
    /// This node's clock key in the current session.
    me: String,
    /// The node it last warned of, and when, while the skew is beyond the
    /// bound.
    warned: Option<(Peer, Instant)>,
}

impl Clocks {
    pub(crate) fn new(config: ClusterConfig, holding: Arc<RwLock<Option<Arc<Holding>>>>) -> Self {
        Clocks {
            config,
            holding,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The node's view of the other clocks now.
    pub(crate) fn report(&self) -> ClockSkew {
        let state = self.state();
        let via_referees = (!state.referee).then_some(state.me.as_str());
        state
            .estimates
            .report(via_referees, self.config.max_clock_skew_ms)
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
        let session = Session {
            me: self.config.clock_key(lease),
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
    /// Each watched key's last publication: its revision, and when it came.
    last_seen: HashMap<String, (i64, i64)>,
    done: mpsc::Sender<Option<Sent>>,
}

impl Session {
    async fn run(mut self, renewed: Arc<Notify>, mut answered: mpsc::Receiver<Option<Sent>>) {
        self.publish(None);
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
            let spread = state.referee.then(|| state.estimates.spread());
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
            prev: self.prev.take(),
            answers,
            peer: Peer {
                slot,
                host: self.clocks.config.info.hostname.clone(),
            },
            spread,
        };
        let (mut client, key, lease) = (self.client.clone(), self.me.clone(), self.lease);
        let clock = Arc::clone(&self.clocks.config.clock);
        let done = self.done.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            publication.ms = clock.now_ms();
            let value = serde_json::to_vec(&publication).unwrap_or_default();
            let options = PutOptions::new().with_lease(lease);
            let put = tokio::time::timeout(CALL_TIMEOUT, client.put(key, value, Some(options)));
            let sent = match put.await {
                Ok(Ok(response)) => response.header().map(|h| Sent {
                    rev: h.revision(),
                    ms: publication.ms,
                    rtt_us: started.elapsed().as_micros() as u64,
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
        let first = GetOptions::new()
            .with_prefix()
            .with_keys_only()
            .with_limit(REFEREES as i64);
        let firsts = keys(&self.get(&prefix, first).await?);
        let referee = firsts.len() < REFEREES || firsts.contains(&self.me);
        let (watched, read) = if referee {
            (
                WatchOptions::new().with_prefix(),
                GetOptions::new().with_prefix(),
            )
        } else {
            let end = format!("{}\0", firsts.iter().max()?);
            (
                WatchOptions::new().with_range(end.as_str()),
                GetOptions::new().with_range(end.as_str()),
            )
        };
        let watch = self.client.watch(prefix.as_str(), Some(watched));
        let mut stream = tokio::time::timeout(CALL_TIMEOUT, watch).await.ok()?.ok()?;
        if !referee {
            stream.watch(self.me.clone(), None).await.ok()?;
        }
        stream.watch(probe_key, None).await.ok()?;
        // Read once the watch is asked for: a node gone before is not
        // listed, one gone after comes as an event (at worst, one gone in
        // between is forgotten at the next choice).
        let present = keys(&self.get(&prefix, read.with_keys_only()).await?);
        self.last_seen.retain(|key, _| present.contains(key));
        let mut state = self.clocks.state();
        state.estimates.keep_only(|key| present.contains(key));
        state.referee = referee;
        state.me.clone_from(&self.me);
        Some(stream)
    }

    async fn get(&mut self, key: &str, options: GetOptions) -> Option<etcd_client::GetResponse> {
        let read = self.client.get(key, Some(options));
        tokio::time::timeout(CALL_TIMEOUT, read).await.ok()?.ok()
    }

    /// Takes in what the watch brought at `ms` (this node's clock) and `at`.
    fn received(&mut self, response: &WatchResponse, ms: i64, at: Instant) -> Next {
        let config = &self.clocks.config;
        let (prefix, probe_key) = (config.clocks_prefix(), config.probe_key());
        let mut state = self.clocks.state();
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
                state.estimates.forget(&key);
                self.last_seen.remove(key.as_ref());
                if !state.referee {
                    // A referee went: watch the next one.
                    return Next::Rechoose;
                }
                continue;
            }
            // What etcd holds is not trusted: a value that is not a
            // publication is no measurement.
            let Ok(publication) = serde_json::from_slice::<Publication>(kv.value()) else {
                continue;
            };
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
            if let (Some(prev), Some(&(rev, received)), Some(lag)) =
                (publication.prev, self.last_seen.get(key.as_ref()), lag)
                && prev.rev == rev
            {
                let rtt = Duration::from_micros(prev.rtt_us);
                let measured = Measured {
                    offset: Offset::from_delivery(prev.ms, rtt, received, lag),
                    peer: publication.peer.clone(),
                    key: key.to_string(),
                };
                state.estimates.measured(&key, measured);
            }
            self.last_seen
                .insert(key.to_string(), (kv.mod_revision(), ms));
            if !state.referee {
                state.estimates.spread_of(&key, publication.spread);
            }
        }
        Next::Continue
    }
}

fn keys(read: &etcd_client::GetResponse) -> HashSet<String> {
    read.kvs()
        .iter()
        .map(|kv| String::from_utf8_lossy(kv.key()).into_owned())
        .collect()
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
            let lease = config.lease_of_clock_key(kv.key());
            let publication = serde_json::from_slice::<Publication>(kv.value()).ok();
            if let (Some(lease), Some(publication)) = (lease, publication)
                && publication.answers == Some(revision)
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
    use super::*;

    #[test]
    fn a_publication_reads_back_and_anything_else_is_no_measurement() {
        let publication = Publication {
            seq: 3,
            ms: 1_700_000_000_123,
            prev: Some(Sent {
                rev: 42,
                ms: 1_700_000_000_000,
                rtt_us: 850,
            }),
            answers: None,
            peer: Peer {
                slot: Some("datacenter=1,machine=2".into()),
                host: "h".into(),
            },
            spread: None,
        };
        let json = serde_json::to_string(&publication).unwrap();
        assert!(
            !json.contains("answers") && !json.contains("spread"),
            "{json}"
        );
        let back: Publication = serde_json::from_str(&json).unwrap();
        assert_eq!(back.prev.unwrap().rtt_us, 850);
        assert_eq!(back.peer.slot.as_deref(), Some("datacenter=1,machine=2"));
        for garbage in [&b""[..], b"garbage", b"{}", br#"{"seq":-1,"ms":0}"#] {
            assert!(serde_json::from_slice::<Publication>(garbage).is_err());
        }
    }
}

//! Clock skew between the nodes of a cluster: how far another node's clock
//! is from this one's, and how sure that is. IDs from two nodes sort by
//! time only as well as their clocks agree: an ID one node issues now sorts
//! below the IDs another, whose clock is 500 ms ahead, issued half a
//! second ago.
//!
//! # The reference: one write, applied once
//!
//! etcd's clock cannot be the reference: etcd never shows it, and nothing
//! keeps it right. What both nodes see is etcd *applying a write*, one
//! instant for everyone. With its lease renewals, each node puts its clock
//! reading under `clocks/{lease}` (see `clocks`):
//!
//! - the writer reads its clock (`ms`) just before sending the put, and
//!   times the round trip on its monotonic clock (`rtt`). The write was
//!   applied while the writer's clock read between `ms` and `ms + rtt`
//!   (plus 1 ms, since a reading in whole milliseconds truncates). That is
//!   certain.
//! - a node watching the key receives the write at its own clock `w`. The
//!   write was applied before that: certain. It was applied no earlier than
//!   `w - lag`, where `lag` is the longest that one of this node's last
//!   eight publications took to come back on its own watch once sent.
//!   That is the one assumption: an event reaches the watcher no slower
//!   than the watcher's own writes go round. A watch that falls behind (an
//!   overloaded etcd, a process not scheduled in time, a watch catching up
//!   on history, which is why `clocks` only ever watches from now) breaks
//!   it, and then the interval is too low.
//!
//! So the writer's clock minus the watcher's lies between `ms - w - 1` and
//! `ms + rtt + 1 - w + lag`: the estimate is the middle, the bound half the
//! width, `(rtt + lag) / 2 + 1` ms. This is NTP's arithmetic (offset ± half
//! the round trip), with etcd's applying a write in the place of the
//! server's timestamps. A put's round trip is known only once it is
//! answered, so each publication carries the previous one's revision,
//! reading and round trip, and the watcher pairs that revision with when it
//! received it: estimates are one renewal period old.
//!
//! A broken assumption only ever moves the high end down; the low end is
//! certain. So a node's estimate is drawn from its last eight samples: the
//! highest low end and the highest high end, which hold the truth as long
//! as one of them kept the assumption ([`Samples`]).
//!
//! # A clock stepped
//!
//! Samples taken before a clock was stepped (or slewed) say nothing of the
//! offset after it, and eight samples take eight renewals to replace: an
//! estimate drawn from them after a step is an interval that held the old
//! offset and misses the new one. So each node also counts how far its
//! clock has moved against its monotonic clock since it started, its
//! *drift* (zero until its clock is stepped or slewed), publishes it with
//! each reading, and reads its own at each receipt. A sample is kept with
//! both drifts taken out, which leaves the offset of the two monotonic
//! clocks, untouched by any step; the estimate adds back the other node's
//! latest drift less this node's drift now. A step of either clock is then
//! followed at once, in both directions, and never taken for a late
//! delivery. (A node that publishes no drift, of an older version, counts
//! as never stepped: its steps are followed as [`Samples`] says.) A drift
//! is read from the same reading as the clock it goes with, so it adds
//! nothing to the bound: the reading's own millisecond is already in it.
//!
//! # Who measures whom
//!
//! Every node watching every other's publications would cost etcd N²
//! deliveries a period (a million a period at 1,024 nodes). Instead the
//! three nodes whose keys sort first, the referees, watch and measure
//! every node, and publish the lowest and highest offset they found (their
//! [`Spread`]); every other node measures the referees and adds: node x's
//! offset from me is x's offset from referee r plus r's offset from me, and
//! the bounds add. In a cluster of three or fewer, every node is a referee.
//! etcd then delivers about 4N events a period (each referee N, each node
//! its referees and itself), and a referee's spread is two offsets
//! whatever N is. Who the referees are is chosen again as soon as the
//! first three keys change (a node joins or leaves among them), so that a
//! node's role follows the keys at once, not at its next periodic choice.
//!
//! # What etcd holds is not trusted
//!
//! Anyone who may write the cluster's keys may write a clock key. Only a
//! key attached to a live lease, the one its name gives, counts as a node
//! (`clocks` checks), and only values a clock of the cluster can give are
//! taken in: readings and drifts within the layout's time range, round
//! trips within [`LONGEST_ROUND_TRIP`], a spread's offsets and bounds
//! finite and within the layout's span, its count at most the clock keys
//! present. So every offset a node reports is finite and at most twice the
//! layout's span, and its count of nodes at most the keys present.
//!
//! # `cluster status`: a probe, with no assumption
//!
//! `cluster status` measures each holder from the machine it runs on, by a
//! probe: it reads its clock (`sent`), puts the probe key, and watches for
//! answers. A node that receives the probe reads its clock (`read`) and
//! publishes at once, naming the probe's revision. Its reading was taken
//! after the probe was applied, so after `sent`, and before its answer
//! reached the caller at `w`: the offset lies between `read - w - 1` and
//! `read + 1 - sent`, with nothing assumed.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How far another clock is from this one: `offset_ms` is theirs minus
/// ours (positive: theirs is ahead), and the true offset lies within
/// `offset_ms ± bound_ms`.
///
/// ```
/// use snowflake_etcd::Offset;
///
/// let offset = Offset { offset_ms: 480.0, bound_ms: 30.0 };
/// assert!(offset.beyond(100));
/// // It may be as little as 450 ms: not certainly beyond 460.
/// assert!(!offset.beyond(460));
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Offset {
    /// The other clock minus this one, in milliseconds.
    pub offset_ms: f64,
    /// Half the width of the interval the true offset lies in.
    pub bound_ms: f64,
}

impl Offset {
    /// The middle of the interval from `low` to `high`.
    fn between(low: f64, high: f64) -> Offset {
        Offset {
            offset_ms: (low + high) / 2.0,
            bound_ms: (high - low) / 2.0,
        }
    }

    /// A publication watched (see the module's documentation): the writer
    /// read `sent_ms` before a put whose round trip took `rtt`, and this
    /// node received it at `received_ms`, its own writes coming back within
    /// `lag`.
    pub(crate) fn from_delivery(
        sent_ms: i64,
        rtt: Duration,
        received_ms: i64,
        lag: Duration,
    ) -> Offset {
        let base = (sent_ms as f64) - (received_ms as f64);
        let high = base + 1.0 + millis(rtt) + millis(lag);
        Offset::between(base - 1.0, high)
    }

    /// A probe answered: the node read `read_ms` after the probe, sent at
    /// this side's `sent_ms`, was applied, and its answer arrived at
    /// `received_ms`.
    pub(crate) fn from_probe(read_ms: i64, sent_ms: i64, received_ms: i64) -> Offset {
        let read = read_ms as f64;
        Offset::between(read - received_ms as f64 - 1.0, read + 1.0 - sent_ms as f64)
    }

    /// This offset moved by `ms`.
    pub(crate) fn shifted(self, ms: f64) -> Offset {
        Offset {
            offset_ms: self.offset_ms + ms,
            bound_ms: self.bound_ms,
        }
    }

    /// This offset (b from a) followed by `next` (c from b): c from a.
    pub(crate) fn then(self, next: Offset) -> Offset {
        Offset {
            offset_ms: self.offset_ms + next.offset_ms,
            bound_ms: self.bound_ms + next.bound_ms,
        }
    }

    /// Whether the clocks certainly disagree by more than `limit_ms`: the
    /// whole interval lies beyond it.
    pub fn beyond(&self, limit_ms: u64) -> bool {
        self.offset_ms.abs() - self.bound_ms > limit_ms as f64
    }

    /// Rounded to a tenth of a millisecond, for people.
    fn rounded(self) -> Offset {
        let tenth = |x: f64| (x * 10.0).round() / 10.0;
        Offset {
            offset_ms: tenth(self.offset_ms),
            bound_ms: tenth(self.bound_ms),
        }
    }
}

pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The longest round trip of a publication that is taken in: far beyond
/// the time a node waits for its put (two seconds), so only a value no
/// node's put could take is refused.
pub(crate) const LONGEST_ROUND_TRIP: Duration = Duration::from_secs(20);

/// Which node an offset is of, as its publication says.
///
/// ```
/// use snowflake_etcd::Peer;
///
/// let peer = Peer { slot: Some("datacenter=1,machine=7".into()), host: "web-3".into() };
/// assert_eq!(peer.to_string(), "slot datacenter=1,machine=7 on web-3");
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Peer {
    /// The slot it held when it published, if any.
    #[serde(default)]
    pub slot: Option<String>,
    /// Its host name.
    #[serde(default)]
    pub host: String,
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.slot {
            Some(slot) => write!(f, "slot {slot} on {}", self.host),
            None => write!(f, "a node without a slot on {}", self.host),
        }
    }
}

/// An offset and whose it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Measured {
    /// The other clock minus this one.
    #[serde(flatten)]
    pub(crate) offset: Offset,
    /// The other node.
    #[serde(flatten)]
    pub(crate) peer: Peer,
    /// The other node's clock key, so that a node finds itself in a
    /// referee's spread.
    #[serde(default)]
    pub(crate) key: String,
}

/// The lowest and highest offsets a node measured, published so that nodes
/// that measure only it learn of the rest (see "Who measures whom").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub(crate) struct Spread {
    /// How many nodes it measured.
    pub(crate) n: usize,
    /// The offset furthest behind it.
    #[serde(default)]
    pub(crate) lo: Option<Measured>,
    /// The offset furthest ahead of it.
    #[serde(default)]
    pub(crate) hi: Option<Measured>,
}

/// A node's view of the other clocks, for `/readyz`, metrics and the log.
///
/// ```
/// let skew = snowflake_etcd::ClockSkew::unknown(100);
/// assert_eq!(skew.nodes, 0);
/// assert!(!skew.beyond());
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClockSkew {
    /// The offset of the clock furthest from this node's, in milliseconds
    /// (positive: ahead); `None` until one is measured.
    pub max_offset_ms: Option<f64>,
    /// The true offset lies within `max_offset_ms ± bound_ms`.
    pub bound_ms: Option<f64>,
    /// How many other nodes the estimate covers.
    pub nodes: usize,
    /// The node furthest off.
    pub peer: Option<Peer>,
    /// The skew beyond which the node warns (`--max-clock-skew-ms`).
    pub max_allowed_ms: u64,
    /// Whether this node is a referee, measuring every node itself; if not,
    /// it measures the referees and reads of the rest in their spreads.
    pub referee: bool,
    /// How many other nodes' clocks etcd delivers to this node: every
    /// node's, for a referee; the referees' only, for the others.
    pub watched: usize,
}

impl ClockSkew {
    /// Nothing measured yet, warning beyond `max_allowed_ms`.
    pub fn unknown(max_allowed_ms: u64) -> ClockSkew {
        ClockSkew {
            max_offset_ms: None,
            bound_ms: None,
            nodes: 0,
            peer: None,
            max_allowed_ms,
            referee: false,
            watched: 0,
        }
    }

    /// Whether some clock certainly disagrees with this node's by more than
    /// the allowed skew.
    pub fn beyond(&self) -> bool {
        match (self.max_offset_ms, self.bound_ms) {
            (Some(offset_ms), Some(bound_ms)) => Offset {
                offset_ms,
                bound_ms,
            }
            .beyond(self.max_allowed_ms),
            _ => false,
        }
    }
}

/// How many of a node's last samples its estimate is drawn from.
const WINDOW: usize = 8;
/// How many samples of a node are taken in before it is first reported: a
/// process that has just started is the likeliest to take in a delivery
/// late, and one sample alone would stand for the node until the next.
const FIRST: usize = 3;

/// The last samples of one node's offset, as intervals (lowest, highest),
/// with the drifts of both clocks taken out (see "A clock stepped"), and
/// how many were ever taken in.
///
/// A sample's low end is certain; its high end holds only if the delivery
/// was no slower than this node's own round (see the module's
/// documentation), and one that was slower, a process not scheduled in
/// time, pulls the whole interval down. Together the samples say more than
/// the last one alone: the true offset is above the highest low end (all
/// are certain), and below the highest high end as long as one sample in
/// the window kept the assumption.
///
/// A sample whose low end is above an older one's high end contradicts it
/// with a certainty: the older one was delivered late, or a clock was
/// stepped that did not say so (a node of an older version). The older one
/// is dropped, so the estimate follows at once. The other way round (the
/// new high end below an older low end) a late delivery and such a step
/// cannot be told apart: both stay, the older low end holds the estimate
/// up, and the step is followed once the samples from before it have left
/// the window. A step a node announces never gets here.
#[derive(Debug, Default)]
struct Samples(VecDeque<(f64, f64)>, usize);

impl Samples {
    fn add(&mut self, sample: Offset) {
        let (low, high) = (
            sample.offset_ms - sample.bound_ms,
            sample.offset_ms + sample.bound_ms,
        );
        self.0.retain(|&(_, h)| h >= low);
        if self.0.len() == WINDOW {
            self.0.pop_front();
        }
        self.0.push_back((low, high));
        self.1 += 1;
    }

    /// What the window says, once [`FIRST`] samples were taken in.
    fn estimate(&self) -> Option<Offset> {
        if self.1 < FIRST {
            return None;
        }
        let highest =
            |end: fn(&(f64, f64)) -> f64| self.0.iter().map(end).fold(f64::NEG_INFINITY, f64::max);
        Some(Offset::between(highest(|s| s.0), highest(|s| s.1)))
    }
}

/// A node whose publications this one receives.
#[derive(Debug)]
struct Watched {
    samples: Samples,
    /// Its drift at its latest publication.
    drift_ms: f64,
    peer: Peer,
}

/// Who asks for a report: this node, as it sees itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Me<'a> {
    /// Its clock keys, this session's and the sessions' before: a node is
    /// no distance from itself, under whichever key a referee still lists
    /// it.
    pub(crate) keys: &'a [String],
    /// Whether it is a referee: if not, it also adds up the offsets of the
    /// referees' spreads.
    pub(crate) referee: bool,
    /// Its drift now.
    pub(crate) drift_ms: f64,
    /// The most other nodes there can be: the clock keys present, less
    /// its own.
    pub(crate) others_at_most: usize,
}

/// What a node measured: each watched node's samples and drift, by key,
/// and the spreads the referees published.
#[derive(Debug, Default)]
pub(crate) struct Estimates {
    watched: HashMap<String, Watched>,
    spreads: HashMap<String, Spread>,
}

impl Estimates {
    /// A publication of the node behind `key`, whose clock had drifted
    /// `drift_ms` when read, and the sample it completed if it did one,
    /// with both drifts taken out (see "A clock stepped"). The node is
    /// reported once [`FIRST`] samples are in.
    pub(crate) fn heard(&mut self, key: &str, peer: Peer, drift_ms: f64, sample: Option<Offset>) {
        let watched = self
            .watched
            .entry(key.to_string())
            .or_insert_with(|| Watched {
                samples: Samples::default(),
                drift_ms,
                peer: peer.clone(),
            });
        watched.drift_ms = drift_ms;
        watched.peer = peer;
        if let Some(sample) = sample {
            watched.samples.add(sample);
        }
    }

    pub(crate) fn spread_of(&mut self, key: &str, spread: Option<Spread>) {
        match spread {
            Some(spread) => self.spreads.insert(key.to_string(), spread),
            None => self.spreads.remove(key),
        };
    }

    /// The node behind `key` is gone (its lease ended).
    pub(crate) fn forget(&mut self, key: &str) {
        self.watched.remove(key);
        self.spreads.remove(key);
    }

    /// Keeps only the keys `present` says are still there.
    pub(crate) fn keep_only(&mut self, present: impl Fn(&str) -> bool) {
        self.watched.retain(|key, _| present(key));
        self.spreads.retain(|key, _| present(key));
    }

    /// The offsets of the nodes measured, now that this node's clock has
    /// drifted `drift_ms`.
    fn direct(&self, drift_ms: f64) -> impl Iterator<Item = Measured> + '_ {
        self.watched.iter().filter_map(move |(key, watched)| {
            Some(Measured {
                offset: watched
                    .samples
                    .estimate()?
                    .shifted(watched.drift_ms - drift_ms),
                peer: watched.peer.clone(),
                key: key.clone(),
            })
        })
    }

    /// What this node publishes of its own measurements, its clock having
    /// drifted `drift_ms`.
    pub(crate) fn spread(&self, drift_ms: f64) -> Spread {
        let by = |a: &Measured, b: &Measured| a.offset.offset_ms.total_cmp(&b.offset.offset_ms);
        let direct: Vec<Measured> = self.direct(drift_ms).collect();
        Spread {
            n: direct.len(),
            lo: direct.iter().min_by(|a, b| by(a, b)).cloned(),
            hi: direct.iter().max_by(|a, b| by(a, b)).cloned(),
        }
    }

    /// The offset furthest from zero, measured or, unless `me` is a
    /// referee, also added up through the referees' spreads (`me` left out
    /// of them); and how many nodes that covers.
    pub(crate) fn furthest(&self, me: Me<'_>) -> Option<(Measured, usize)> {
        let direct: HashMap<String, Measured> = self
            .direct(me.drift_ms)
            .map(|measured| (measured.key.clone(), measured))
            .collect();
        let mut nodes = direct.len();
        let mut candidates: Vec<Measured> = direct.values().cloned().collect();
        if !me.referee {
            for (key, spread) in &self.spreads {
                let Some(referee) = direct.get(key) else {
                    continue;
                };
                nodes = nodes.max(spread.n);
                for far in spread.lo.iter().chain(&spread.hi) {
                    if me.keys.contains(&far.key) {
                        continue;
                    }
                    candidates.push(Measured {
                        offset: referee.offset.then(far.offset),
                        peer: far.peer.clone(),
                        key: far.key.clone(),
                    });
                }
            }
        }
        let furthest = candidates.into_iter().max_by(|a, b| {
            a.offset
                .offset_ms
                .abs()
                .total_cmp(&b.offset.offset_ms.abs())
        })?;
        Some((furthest, nodes.min(me.others_at_most)))
    }

    /// The report for `/readyz`.
    pub(crate) fn report(&self, me: Me<'_>, max_allowed_ms: u64) -> ClockSkew {
        let mut report = match self.furthest(me) {
            None => ClockSkew::unknown(max_allowed_ms),
            Some((far, nodes)) => {
                let offset = far.offset.rounded();
                ClockSkew {
                    max_offset_ms: Some(offset.offset_ms),
                    bound_ms: Some(offset.bound_ms),
                    nodes,
                    peer: Some(far.peer),
                    ..ClockSkew::unknown(max_allowed_ms)
                }
            }
        };
        report.referee = me.referee;
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes in `FIRST` equal samples: the node is reported.
    fn measure(estimates: &mut Estimates, key: &str, measured: Measured) {
        for _ in 0..FIRST {
            sample(estimates, key, &measured);
        }
    }

    /// One sample of a node that never stepped its clock.
    fn sample(estimates: &mut Estimates, key: &str, measured: &Measured) {
        let peer = measured.peer.clone();
        estimates.heard(key, peer, 0.0, Some(measured.offset));
    }

    /// A node that is not a referee, under key `me`, in a big cluster, and
    /// its clock never stepped.
    fn watcher(me: &[String]) -> Me<'_> {
        Me {
            keys: me,
            referee: false,
            drift_ms: 0.0,
            others_at_most: usize::MAX,
        }
    }

    /// A referee, its clock never stepped.
    const REFEREE: Me<'static> = Me {
        keys: &[],
        referee: true,
        drift_ms: 0.0,
        others_at_most: usize::MAX,
    };

    fn at(offset_ms: f64, bound_ms: f64, slot: &str) -> Measured {
        Measured {
            offset: Offset {
                offset_ms,
                bound_ms,
            },
            peer: Peer {
                slot: Some(slot.into()),
                host: "h".into(),
            },
            key: slot.into(),
        }
    }

    /// Hand-worked: the writer's clock is 500 ms ahead. It reads 10,500 and
    /// sends; the put is applied 3 ms later (10,503 on its clock, 10,003 on
    /// the watcher's) and answered 3 ms after that (rtt 6 ms); the event
    /// reaches the watcher 2 ms after it was applied, at 10,005, and the
    /// watcher's own writes come back within 8 ms.
    #[test]
    fn a_watched_publication_brackets_the_true_offset() {
        let offset = Offset::from_delivery(
            10_500,
            Duration::from_millis(6),
            10_005,
            Duration::from_millis(8),
        );
        // Between 10,500 - 10,005 - 1 = 494 and 495 + 1 + 6 + 8 = 510.
        assert_eq!(offset.offset_ms, 502.0);
        assert_eq!(offset.bound_ms, 8.0);
        assert!((offset.offset_ms - 500.0).abs() <= offset.bound_ms);
        // The same with the clocks the other way round.
        let back = Offset::from_delivery(
            9_500,
            Duration::from_millis(6),
            10_005,
            Duration::from_millis(8),
        );
        assert!((back.offset_ms + 500.0).abs() <= back.bound_ms, "{back:?}");
    }

    /// Any true offset, any split of the delays that keeps the assumption:
    /// the interval holds it.
    #[test]
    fn the_bound_holds_for_every_split_of_the_delays() {
        for true_offset in [-700_i64, -3, 0, 1, 250, 9_000] {
            for to_etcd in [0_i64, 1, 4, 9] {
                for back in [0_i64, 2, 5] {
                    for watch in [0_i64, 3, 7] {
                        // Real time in ms; the writer sends at 1,000.
                        let applied = 1_000 + to_etcd;
                        let answered = applied + back;
                        let received = applied + watch;
                        let sent_ms = 1_000 + true_offset;
                        let rtt = Duration::from_millis((answered - 1_000) as u64);
                        // The watcher's own round went out and back within 7 ms.
                        let lag = Duration::from_millis(7);
                        let got = Offset::from_delivery(sent_ms, rtt, received, lag);
                        assert!(
                            (got.offset_ms - true_offset as f64).abs() <= got.bound_ms,
                            "offset {true_offset}, delays {to_etcd}/{back}/{watch}: {got:?}"
                        );
                    }
                }
            }
        }
    }

    /// Hand-worked probe: the caller reads 20,000 and puts the probe; the
    /// node (300 ms behind) reads 19,704 when it arrives, 4 ms later; its
    /// answer reaches the caller at 20,009.
    #[test]
    fn a_probe_brackets_the_true_offset_with_nothing_assumed() {
        let offset = Offset::from_probe(19_704, 20_000, 20_009);
        // Between 19,704 - 20,009 - 1 = -306 and 19,704 + 1 - 20,000 = -295.
        assert_eq!(offset.offset_ms, -300.5);
        assert_eq!(offset.bound_ms, 5.5);
    }

    #[test]
    fn beyond_means_certainly_beyond() {
        let offset = |offset_ms, bound_ms| Offset {
            offset_ms,
            bound_ms,
        };
        assert!(offset(-500.0, 10.0).beyond(100));
        assert!(!offset(105.0, 10.0).beyond(100));
        assert!(!offset(50.0, 0.0).beyond(100));
        assert!(!ClockSkew::unknown(0).beyond());
    }

    #[test]
    fn a_referee_reports_the_furthest_node_it_measured() {
        let mut estimates = Estimates::default();
        measure(&mut estimates, "a", at(3.0, 1.0, "s=1"));
        measure(&mut estimates, "b", at(-510.0, 2.0, "s=2"));
        measure(&mut estimates, "c", at(40.0, 1.0, "s=3"));
        let report = estimates.report(REFEREE, 100);
        assert_eq!(report.max_offset_ms, Some(-510.0));
        assert_eq!(report.nodes, 3);
        assert!(report.referee);
        assert_eq!(report.peer.unwrap().slot.as_deref(), Some("s=2"));
        let spread = estimates.spread(0.0);
        assert_eq!(spread.n, 3);
        assert_eq!(spread.lo.unwrap().offset.offset_ms, -510.0);
        assert_eq!(spread.hi.unwrap().offset.offset_ms, 40.0);
        estimates.forget("b");
        assert_eq!(estimates.report(REFEREE, 100).max_offset_ms, Some(40.0));
    }

    /// A node that measures only a referee, 2 ms ahead of it, learns from
    /// the referee's spread that some node is 600 ms ahead of the referee:
    /// 602 ms ahead of itself, the bounds added.
    #[test]
    fn other_nodes_are_reached_through_a_referees_spread() {
        let mut estimates = Estimates::default();
        measure(&mut estimates, "ref", at(2.0, 1.5, "s=0"));
        let spread = Spread {
            n: 64,
            lo: Some(at(-4.0, 2.0, "s=9")),
            hi: Some(at(600.0, 2.5, "s=7")),
        };
        estimates.spread_of("ref", Some(spread.clone()));
        let me = ["me".to_string()];
        let report = estimates.report(watcher(&me), 100);
        assert_eq!(report.max_offset_ms, Some(602.0));
        assert_eq!(report.bound_ms, Some(4.0));
        assert_eq!(report.nodes, 64);
        assert_eq!(report.peer.as_ref().unwrap().slot.as_deref(), Some("s=7"));
        assert!(report.beyond());
        // A referee itself goes by what it measured.
        assert_eq!(estimates.report(REFEREE, 100).max_offset_ms, Some(2.0));
        // A node is left out of a spread it is in: it is no distance from
        // itself, however far the referee's view of it is from its own.
        let mut far = spread.clone();
        far.hi = Some(at(600.0, 2.5, "me"));
        estimates.spread_of("ref", Some(far.clone()));
        assert_eq!(
            estimates.report(watcher(&me), 100).max_offset_ms,
            Some(-2.0)
        );
        // Nor under the key of a session before this one, which a referee
        // may list until that session's lease ends.
        let mine = ["me now".to_string(), "me".to_string()];
        assert_eq!(
            estimates.report(watcher(&mine), 100).max_offset_ms,
            Some(-2.0)
        );
        // The count of nodes is at most the clock keys present.
        let few = Me {
            others_at_most: 4,
            ..watcher(&me)
        };
        assert_eq!(estimates.report(few, 100).nodes, 4);
        // A spread from a node this one does not measure adds nothing.
        let mut estimates = Estimates::default();
        estimates.spread_of("ref", Some(spread));
        assert_eq!(estimates.report(watcher(&me), 100), ClockSkew::unknown(100));
    }

    /// A sample as the interval (low, high).
    fn interval(low: f64, high: f64) -> Offset {
        Offset::between(low, high)
    }

    /// Takes in `sample`; what the window says now.
    fn add(samples: &mut Samples, sample: Offset) -> Offset {
        samples.add(sample);
        samples.1 = samples.1.max(FIRST);
        samples.estimate().unwrap()
    }

    #[test]
    fn a_late_delivery_is_held_up_by_the_samples_before_it() {
        let mut samples = Samples::default();
        let first = add(&mut samples, interval(496.0, 506.0));
        assert_eq!((first.offset_ms, first.bound_ms), (501.0, 5.0));
        // Delivered 30 ms late: its high end is below the truth, and it
        // alone would miss it; with the one before, the truth is held.
        let late = add(&mut samples, interval(465.0, 477.0));
        assert!((late.offset_ms - 500.0).abs() <= late.bound_ms, "{late:?}");
        assert_eq!((late.offset_ms, late.bound_ms), (501.0, 5.0));
        // A sample whose low end is certain drops the late one it
        // contradicts, and narrows the estimate.
        let after = add(&mut samples, interval(498.0, 504.0));
        assert_eq!(samples.0.len(), 2);
        assert_eq!((after.offset_ms, after.bound_ms), (502.0, 4.0));
    }

    /// A node of an older version, which publishes no drift: its steps
    /// are followed forward at once and back within the window.
    #[test]
    fn an_unannounced_step_is_followed_forward_at_once_and_back_within_the_window() {
        let mut samples = Samples::default();
        add(&mut samples, interval(-4.0, 6.0));
        add(&mut samples, interval(-3.0, 5.0));
        let ahead = add(&mut samples, interval(496.0, 506.0));
        assert_eq!((ahead.offset_ms, ahead.bound_ms), (501.0, 5.0));
        // Stepped back again: held up by the samples from before the step
        // until they have left the window, never longer.
        let mut back = Offset::default();
        for _ in 0..WINDOW {
            assert!(back.offset_ms != 1.0 || back.bound_ms != 5.0);
            back = add(&mut samples, interval(-4.0, 6.0));
        }
        assert_eq!((back.offset_ms, back.bound_ms), (1.0, 5.0));
        assert_eq!(samples.0.len(), WINDOW);
    }

    /// The scenario's failure, by hand: a node's estimate of another, wide
    /// from one slow round trip (260.5 ± 271.5, which held the true 0),
    /// then this node's clock is stepped 500 ms ahead. Without the drifts
    /// the window would still say 260.5 ± 271.5 for up to eight samples,
    /// missing the true -500; with them the step is followed at once,
    /// whichever clock moved, and the samples after it agree with the ones
    /// before.
    #[test]
    fn a_step_of_either_clock_is_followed_at_once() {
        let me = ["me".to_string()];
        let at = |drift_ms| Me {
            drift_ms,
            ..watcher(&me)
        };
        let holds = |estimates: &Estimates, me: Me<'_>, truth: f64| {
            let report = estimates.report(me, 100);
            let (offset, bound) = (report.max_offset_ms.unwrap(), report.bound_ms.unwrap());
            assert!(
                (offset - truth).abs() <= bound,
                "{offset} ± {bound}, truth {truth}"
            );
            (offset, bound)
        };
        let mut estimates = Estimates::default();
        let peer = Peer::default();
        for sample in [
            interval(-11.0, 532.0),
            interval(-12.0, 3.0),
            interval(-15.0, 2.0),
        ] {
            estimates.heard("r", peer.clone(), 0.0, Some(sample));
        }
        assert_eq!(holds(&estimates, at(0.0), 0.0), (260.5, 271.5));
        // This node's clock stepped 500 ms ahead: its drift is now 500.
        assert_eq!(holds(&estimates, at(500.0), -500.0), (-239.5, 271.5));
        // Its next samples are taken at drift 500: the drifts taken out,
        // they agree with the ones before and narrow the estimate.
        let raw = interval(-503.0, -495.0);
        estimates.heard("r", peer.clone(), 0.0, Some(raw.shifted(500.0)));
        assert_eq!(holds(&estimates, at(500.0), -500.0), (-235.5, 267.5));
        // The other's clock is stepped 800 ms back, and it says so.
        estimates.heard("r", peer.clone(), -800.0, None);
        holds(&estimates, at(500.0), -1300.0);
        // A referee's spread follows the steps too.
        let hi = estimates.spread(500.0).hi.unwrap().offset;
        assert!((hi.offset_ms + 1300.0).abs() <= hi.bound_ms, "{hi:?}");
    }

    #[test]
    fn a_node_is_first_reported_once_a_few_samples_are_in() {
        let mut estimates = Estimates::default();
        for _ in 1..FIRST {
            sample(&mut estimates, "a", &at(-60.0, 8.0, "s=1"));
            assert_eq!(estimates.report(REFEREE, 100).max_offset_ms, None);
            // Heard of, with no sample, counts for nothing either.
            estimates.heard("a", Peer::default(), 0.0, None);
        }
        sample(&mut estimates, "a", &at(2.0, 3.0, "s=1"));
        // The late first samples are contradicted by the third's low end.
        assert_eq!(estimates.report(REFEREE, 100).max_offset_ms, Some(2.0));
    }

    #[test]
    fn what_is_gone_is_forgotten() {
        let mut estimates = Estimates::default();
        measure(&mut estimates, "a", at(1.0, 1.0, "s=1"));
        measure(&mut estimates, "b", at(2.0, 1.0, "s=2"));
        estimates.spread_of("b", Some(Spread::default()));
        estimates.keep_only(|key| key == "a");
        assert_eq!(estimates.spread(0.0).n, 1);
        assert!(estimates.spreads.is_empty());
        assert_eq!(estimates.watched.len(), 1);
        estimates.forget("a");
        assert!(estimates.watched.is_empty());
    }
}

//! Clock skew between nodes (issue 22): every node measures how far the
//! other clocks are from its own, within a bound, and shows it in
//! `/readyz`, `/metrics` and `cluster status`; it warns beyond
//! `--max-clock-skew-ms`, and never stops issuing for it.
//!
//! The machine has one clock, so a skewed node runs in this process on a
//! clock shifted from the system's by a known amount ([`Shifted`]): the
//! truth every estimate is held to. Every estimate must hold the truth
//! within the bound it states. Clock keys forged in etcd neither become
//! referees nor are measured, and nothing a node reports comes from them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use snowflake::{Clock, SystemClock};

use crate::in_process::{self, InProcess};
use crate::node::{Node, assert_no_duplicates, cluster_status, cluster_status_json, describe};
use crate::proxy::Proxy;
use crate::scenario::{Scene, TTL_S, poll};
use crate::support::http;

/// The system clock moved by a shift the test sets.
#[derive(Default)]
struct Shifted(AtomicI64);

impl Shifted {
    fn by(ms: i64) -> Arc<Shifted> {
        Arc::new(Shifted(AtomicI64::new(ms)))
    }
}

impl Clock for Shifted {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.0.load(Ordering::Relaxed)
    }
}

/// What a node reports of the other clocks: the offset of the one
/// furthest off, its bound, how many nodes the report covers, whether the
/// node is a referee, and how many nodes' clocks etcd delivers it.
#[derive(Debug, Clone, Copy)]
struct Skew {
    offset_ms: f64,
    bound_ms: f64,
    nodes: u64,
    referee: bool,
    watched: u64,
}

impl Skew {
    /// From `/readyz`'s `clock_skew`; `None` until a clock is measured.
    fn from_json(skew: &Value) -> Option<Skew> {
        Some(Skew {
            offset_ms: skew["max_offset_ms"].as_f64()?,
            bound_ms: skew["bound_ms"].as_f64()?,
            nodes: skew["nodes"].as_u64()?,
            referee: skew["referee"].as_bool()?,
            watched: skew["watched"].as_u64()?,
        })
    }

    fn of_node(node: &Node) -> Option<Skew> {
        Skew::from_json(&node.ready()?["clock_skew"])
    }

    fn of_in_process(node: &InProcess) -> Option<Skew> {
        let skew = node.cluster.status().clock_skew;
        Some(Skew {
            offset_ms: skew.max_offset_ms?,
            bound_ms: skew.bound_ms?,
            nodes: skew.nodes as u64,
            referee: skew.referee,
            watched: skew.watched as u64,
        })
    }

    /// Fails the test unless the true offset `truth_ms` lies within the
    /// stated bound (the figures are rounded to a tenth of a millisecond).
    fn assert_holds(self, truth_ms: f64, whose: &str) {
        assert!(
            (self.offset_ms - truth_ms).abs() <= self.bound_ms + 0.05,
            "{whose}: measured {self:?}, but the true offset is {truth_ms} ms"
        );
    }
}

/// The value of gauge `name` in `node`'s `/metrics`.
fn gauge(node: &Node, name: &str) -> Option<f64> {
    let (status, body) = http(&node.addr, "GET", "/metrics", "")?;
    assert_eq!(status, 200, "{body}");
    body.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// `cluster status` measured `slot`'s holder, in its table and in its
/// JSON, within the stated bound of `truth_ms`.
fn assert_status_shows(endpoints: &str, slot: &str, truth_ms: f64) {
    let entries = cluster_status_json(endpoints);
    let entry = entries
        .iter()
        .find(|entry| entry["slot"] == slot)
        .unwrap_or_else(|| panic!("{slot} not listed: {entries:?}"));
    let clock = &entry["clock"];
    let probed = |offset_ms, bound_ms| Skew {
        offset_ms,
        bound_ms,
        nodes: 1,
        referee: false,
        watched: 0,
    };
    probed(
        clock["offset_ms"].as_f64().expect("an offset"),
        clock["bound_ms"].as_f64().expect("a bound"),
    )
    .assert_holds(truth_ms, &format!("cluster status --json, {slot}"));
    let table = cluster_status(endpoints, &[]);
    assert!(table.lines().next().unwrap().contains(" clock "), "{table}");
    let row = table
        .lines()
        .find(|line| line.starts_with(slot))
        .unwrap_or_else(|| panic!("{slot} not in the table:\n{table}"));
    // The clock column: `+500.2 ±1.1 ms`.
    let words: Vec<&str> = row.split_whitespace().collect();
    let at = words
        .iter()
        .position(|word| word.starts_with('±'))
        .unwrap_or_else(|| panic!("no clock in the row: {row}"));
    probed(
        words[at - 1].parse().unwrap(),
        words[at].trim_start_matches('±').parse().unwrap(),
    )
    .assert_holds(truth_ms, &format!("cluster status, {row}"));
}

/// The line a node logs when a clock is certainly too far off.
const WARNING: &str = "beyond --max-clock-skew-ms 100";

/// Two nodes on the same clock, among clock keys written by hand as
/// finding 8 of issue 25 did: three with no lease, sorting first; one
/// under a lease other than the one its name gives; one under its own
/// lease. A script keeps writing each as a node would (each naming the
/// revision of the one before, so that they would make samples), some
/// with a spread of 1e300 ms over 1,000,000 nodes and readings in the year
/// 128,000, the others as a node 5 s ahead would. Each node is a referee, is
/// delivered the other's clock and no forged one, measures it within its
/// bound of zero, shows it in `/readyz`, `/metrics` and `cluster status`,
/// and does not warn of skew; nothing it reports comes from the forged
/// keys, and its log says once that it ignored one.
#[test]
fn clocks_that_agree_are_measured_within_their_bound_of_zero_and_forged_clock_keys_change_nothing()
{
    let scene = Scene::start();
    let endpoints = scene.etcd.endpoints();
    let forger = Forger::start(scene.etcd.member(0));
    let nodes = [scene.node(&[]), scene.node(&[])];
    let refs: Vec<&Node> = nodes.iter().collect();
    let context = || {
        let skews: Vec<String> = nodes
            .iter()
            .map(|node| {
                let skew = node.ready().map(|ready| ready["clock_skew"].clone());
                format!("{}: {skew:?}", node.addr)
            })
            .collect();
        format!(
            "{}\n{}\n{}",
            forger.written(),
            skews.join("\n"),
            describe(&refs)
        )
    };
    // Measured the other, as a referee delivered its clock only.
    let measured = |node: &Node| {
        Skew::of_node(node).filter(|skew| skew.nodes == 1 && skew.referee && skew.watched == 1)
    };
    let skews: Vec<Skew> = nodes
        .iter()
        .map(|node| {
            poll(
                Duration::from_secs(20),
                "the node never measured the other's clock, as a referee delivered it only",
                || measured(node),
                context,
            )
        })
        .collect();
    for (node, skew) in nodes.iter().zip(&skews) {
        skew.assert_holds(0.0, &node.addr);
        let offset = gauge(node, "snowflake_cluster_clock_max_offset_seconds").unwrap();
        let bound = gauge(node, "snowflake_cluster_clock_offset_bound_seconds").unwrap();
        assert!(bound > 0.0 && offset.abs() <= bound, "{offset} ± {bound}");
        assert_eq!(
            gauge(node, "snowflake_cluster_clock_nodes_measured"),
            Some(1.0)
        );
        let ready = node.ready().unwrap();
        assert_eq!(ready["clock_skew"]["max_allowed_ms"], 100);
        let other = nodes.iter().find(|n| n.addr != node.addr).unwrap().slot();
        assert_eq!(
            ready["clock_skew"]["peer"]["slot"],
            other.as_str(),
            "{ready}"
        );
    }
    for node in &nodes {
        assert_status_shows(&endpoints, &node.slot(), 0.0);
    }
    // A warning would come at a renewal after a measurement, and a choice
    // of what to watch every ten renewals: through both, while the forged
    // keys are written again and again, what each node says holds.
    let window = Instant::now();
    while window.elapsed() < Duration::from_secs(2 * TTL_S) + Duration::from_millis(500) {
        for node in &nodes {
            let skew = measured(node).unwrap_or_else(|| panic!("{}", context()));
            skew.assert_holds(0.0, &node.addr);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let written = forger.stop();
    assert!(written >= 5 * 5, "the forger wrote only {written} values");
    for node in &nodes {
        // 1e300 written out is 301 digits.
        let log = node.log();
        assert!(!log.contains(WARNING), "{}", node.describe());
        assert!(longest_number(&log) < 20, "{log}");
        let (_, metrics) = http(&node.addr, "GET", "/metrics", "").unwrap();
        assert!(longest_number(&metrics) < 20, "{metrics}");
        // It says once that it ignored a key, and not again in a minute.
        assert_eq!(log.matches("ignored the clock key").count(), 1, "{log}");
    }
}

/// One node's clock is 500 ms ahead; another reaches etcd through a slow
/// link (requests held back 150 ms, answers 100 ms), so its writes are
/// applied well after its clock was read and it hears of the others' well
/// after they were applied: the bound must cover both. Every
/// node measures the skewed clock within its bound of ±500 ms, the real
/// processes log a warning naming it, and all stay ready and issuing.
#[test]
fn a_clock_500_ms_ahead_is_measured_within_the_bound_and_warned_of_while_ids_keep_coming() {
    const SHIFT_MS: f64 = 500.0;
    let scene = Scene::start();
    let endpoints = scene.etcd.endpoints();
    let ahead_slot = "datacenter=31,machine=31";
    let ahead = InProcess::start(in_process::config(
        &scene.etcd,
        ahead_slot,
        Shifted::by(SHIFT_MS as i64),
    ));
    let holding = ahead.holding(Duration::from_secs(20), String::new);
    let slow = Proxy::delaying(
        scene.etcd.member(0),
        Duration::from_millis(150),
        Duration::from_millis(100),
    );
    // A longer lease than the others', so that a renewal's 250 ms round
    // trip is well inside the time one renewal may take.
    let slow_node = Node::start(&slow.endpoint(), &["--lease-ttl", "6"]);
    let mut nodes = [scene.node(&[]), slow_node];
    let refs: Vec<&Node> = nodes.iter().collect();
    let context = || format!("{:?}\n{}", ahead.cluster.status(), describe(&refs));
    for node in &nodes {
        let skew = poll(
            Duration::from_secs(30),
            "a node never measured both other clocks",
            || Skew::of_node(node).filter(|skew| skew.nodes == 2),
            context,
        );
        skew.assert_holds(SHIFT_MS, &node.addr);
        let ready = node.ready().unwrap();
        assert_eq!(ready["clock_skew"]["peer"]["slot"], ahead_slot, "{ready}");
    }
    let skew = poll(
        Duration::from_secs(30),
        "the node ahead never measured both other clocks",
        || Skew::of_in_process(&ahead).filter(|skew| skew.nodes == 2),
        context,
    );
    skew.assert_holds(-SHIFT_MS, "the node ahead");
    for node in &nodes {
        let line = poll(
            Duration::from_secs(20),
            "a node never warned of the clock ahead",
            || {
                let log = node.log();
                let line = log.lines().find(|line| line.contains(WARNING))?;
                Some(line.to_string())
            },
            context,
        );
        assert!(line.contains("WARN") && line.contains(ahead_slot), "{line}");
        let offset = gauge(node, "snowflake_cluster_clock_max_offset_seconds").unwrap();
        let bound = gauge(node, "snowflake_cluster_clock_offset_bound_seconds").unwrap();
        assert!(
            (offset - SHIFT_MS / 1e3).abs() <= bound + 1e-4,
            "{offset} ± {bound}"
        );
        assert_eq!(
            gauge(node, "snowflake_cluster_clock_nodes_measured"),
            Some(2.0)
        );
    }
    // A warning, nothing more: every node stays ready and keeps issuing.
    for node in &mut nodes {
        assert!(node.ready().is_some(), "{}", node.describe());
        assert_eq!(node.ids(500).len(), 500);
    }
    assert_eq!(ahead.ids(&holding, 500).len(), 500);
    let refs: Vec<&Node> = nodes.iter().collect();
    assert_no_duplicates(&refs);
    // `cluster status`, on this machine's clock, sees the same.
    assert_status_shows(&endpoints, ahead_slot, SHIFT_MS);
    for node in &nodes {
        assert_status_shows(&endpoints, &node.slot(), 0.0);
    }
}

/// Five nodes: only the three whose clock keys sort first (the referees)
/// measure everyone; the other two are delivered the referees' clocks
/// only, and learn of the rest from what the referees publish. The clock
/// of one of those two is stepped 500 ms ahead: the other, which never
/// measures it, still reports it within the bound, as does every node, the
/// stepped one too (its own step is followed at once, not once the samples
/// from before it have aged out).
///
/// The roles are waited for first: nodes starting together choose before
/// all their keys are in etcd, and a node becomes a referee as soon as the
/// first three keys change, then covers the nodes it did not watch before
/// a few renewals later. Once each node has its key's role and covers the
/// four others, nothing in a correct cluster changes them.
#[test]
fn beyond_three_nodes_a_skewed_clock_is_learned_of_through_the_referees() {
    const SHIFT_MS: f64 = 500.0;
    let scene = Scene::start();
    let slots: Vec<String> = (27..32)
        .map(|machine| format!("datacenter=31,machine={machine}"))
        .collect();
    let clocks: Vec<Arc<Shifted>> = slots.iter().map(|_| Shifted::by(0)).collect();
    let nodes: Vec<InProcess> = slots
        .iter()
        .zip(&clocks)
        .map(|(slot, clock)| InProcess::start(in_process::config(&scene.etcd, slot, clock.clone())))
        .collect();
    let context = || {
        let statuses: Vec<String> = nodes
            .iter()
            .map(|node| format!("{:?}", node.cluster.status()))
            .collect();
        statuses.join("\n")
    };
    // Each node's place among the clock keys, and its key, from the slot
    // each key's publication names.
    let ranks = || -> Option<Vec<(usize, String)>> {
        let keys = scene.etcd.keys_under("/snowflake/test/clocks/");
        let mut ranks = vec![(usize::MAX, String::new()); slots.len()];
        for (rank, key) in keys.iter().enumerate() {
            let value: Value = serde_json::from_slice(&scene.etcd.get(key)?).ok()?;
            let node = slots.iter().position(|s| value["slot"] == s.as_str())?;
            ranks[node] = (rank, key.clone());
        }
        (keys.len() == slots.len()).then_some(ranks)
    };
    // Every node covers the four others, a referee is delivered the four
    // others' clocks, any other node the three referees' only.
    let ranks = poll(
        Duration::from_secs(30),
        "the nodes never took the roles their keys give and covered the four others",
        || {
            let ranks = ranks()?;
            let settled = nodes.iter().zip(&ranks).all(|(node, &(rank, _))| {
                Skew::of_in_process(node).is_some_and(|skew| {
                    let referee = rank < 3;
                    let watched = if referee { 4 } else { 3 };
                    skew.nodes == 4 && skew.referee == referee && skew.watched == watched
                })
            });
            settled.then_some(ranks)
        },
        context,
    );
    let others: Vec<usize> = (0..nodes.len()).filter(|&i| ranks[i].0 >= 3).collect();
    let (moved, watcher) = (others[0], others[1]);
    clocks[moved].0.store(SHIFT_MS as i64, Ordering::Relaxed);
    // The stepped node follows its own step at once: the samples it took
    // before it still say how far the others are, less the step.
    let at_once = Skew::of_in_process(&nodes[moved]).unwrap();
    at_once.assert_holds(-SHIFT_MS, "the stepped node, at once");
    // It says so: its clock moved 500 ms against its monotonic clock (to
    // the millisecond its readings are cut to).
    let moved_key = &ranks[moved].1;
    poll(
        Duration::from_secs(10),
        "the stepped node never published its clock's step",
        || {
            let value: Value = serde_json::from_slice(&scene.etcd.get(moved_key)?).ok()?;
            let drift_ms = value["drift_ms"].as_f64()?;
            ((drift_ms - SHIFT_MS).abs() <= 2.0).then_some(())
        },
        context,
    );
    for (i, node) in nodes.iter().enumerate() {
        let truth = if i == moved { -SHIFT_MS } else { SHIFT_MS };
        let whose = if i == watcher {
            "the node that learns of it only through the referees"
        } else {
            "a node"
        };
        // Until it has heard of the step a node reports the offsets as they
        // were: once its interval lies wholly more than half the step from
        // the old offset (zero), it must hold the new one. (An interval
        // that held zero cannot, rounded to a tenth or not.)
        let skew = poll(
            Duration::from_secs(30),
            "a node never saw the clock move",
            || {
                let moved = |skew: &Skew| skew.offset_ms.abs() - skew.bound_ms > SHIFT_MS / 2.0;
                Skew::of_in_process(node).filter(moved)
            },
            context,
        );
        skew.assert_holds(truth, whose);
        assert_eq!(skew.nodes, 4, "{whose}: {skew:?}\n{}", context());
    }
    let status = nodes[watcher].cluster.status().clock_skew;
    assert_eq!(
        status.peer.as_ref().and_then(|peer| peer.slot.as_deref()),
        Some(slots[moved].as_str()),
        "moved {moved}, watcher {watcher}, ranks {ranks:?}\n{}",
        context()
    );
    // It was never delivered the moved node's clock: the referees' only.
    assert_eq!(status.watched, 3, "{}", context());
}

/// The most digits in a row in `text`.
fn longest_number(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// Writes forged clock keys in a thread of its own until stopped, through
/// etcd's JSON gateway at `member` (see the first scenario).
struct Forger {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<usize>>,
    keys: Vec<String>,
}

impl Forger {
    fn start(member: &str) -> Forger {
        let addr = member.trim_start_matches("http://").to_string();
        let call = move |path: &str, body: Value| -> Value {
            let (status, answer) = http(&addr, "POST", path, &body.to_string()).unwrap();
            assert_eq!(status, 200, "{path}: {answer}");
            serde_json::from_str(&answer).unwrap()
        };
        let lease = |call: &dyn Fn(&str, Value) -> Value| -> i64 {
            let granted = call("/v3/lease/grant", json!({ "TTL": 60 }));
            granted["ID"].as_str().unwrap().parse().unwrap()
        };
        let key = |lease: i64| format!("/snowflake/test/clocks/{lease:016x}");
        let (other, own) = (lease(&call), lease(&call));
        // (key, the lease it is written under (0: none), what it says):
        // each defence alone keeps at least one of them out. The lease is
        // all that keeps out the keys that say what a clock could.
        let forged: Vec<(String, i64, Says)> = vec![
            (key(1), 0, Says::Absurd),
            (key(2), 0, Says::Absurd),
            (key(3), 0, Says::AheadBy5s),
            (key(4), other, Says::AheadBy5s),
            (key(own), own, Says::Absurd),
        ];
        let keys = forged.iter().map(|(key, ..)| key.clone()).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut revisions = vec![None; forged.len()];
            let mut written = 0;
            while !stopping.load(Ordering::Relaxed) {
                for ((key, lease, says), revision) in forged.iter().zip(&mut revisions) {
                    let value = says.publication(written, *revision).to_string();
                    let mut put =
                        json!({ "key": BASE64.encode(key), "value": BASE64.encode(value) });
                    if *lease != 0 {
                        put["lease"] = json!(lease.to_string());
                    }
                    let answer = call("/v3/kv/put", put);
                    let rev = answer["header"]["revision"]
                        .as_str()
                        .unwrap()
                        .parse()
                        .unwrap();
                    *revision = Some(rev);
                    written += 1;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            written
        });
        Forger {
            stop,
            thread: Some(thread),
            keys,
        }
    }

    fn written(&self) -> String {
        format!("forged clock keys: {:?}", self.keys)
    }

    /// Stops writing; how many values were written.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap())
    }
}

impl Drop for Forger {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What a forged clock key says.
#[derive(Clone, Copy)]
enum Says {
    /// The finding's: a spread of 1e300 ms over 1,000,000 nodes, and
    /// readings in the year 128,000.
    Absurd,
    /// What a node 5 s ahead would publish: taken in, it would be measured.
    AheadBy5s,
}

impl Says {
    /// A publication as a node writes one, naming the revision of its
    /// last write, so that two in a row make a sample.
    fn publication(self, seq: usize, previous: Option<i64>) -> Value {
        let far = |offset_ms: f64| {
            json!({
                "offset_ms": offset_ms,
                "bound_ms": 1.0,
                "slot": "datacenter=0,machine=0",
                "host": "forged",
                "key": "/snowflake/test/clocks/0000000000000009",
            })
        };
        let (ms, spread) = match self {
            Says::Absurd => (
                4_000_000_000_000_000_i64,
                json!({ "n": 1_000_000, "lo": far(-1e300), "hi": far(1e300) }),
            ),
            Says::AheadBy5s => (
                SystemClock.now_ms() + 5_000,
                json!({ "n": 2, "lo": far(-3.0), "hi": far(5_000.0) }),
            ),
        };
        let mut publication = json!({
            "seq": seq,
            "ms": ms,
            "slot": "datacenter=0,machine=1",
            "host": "forged",
            "spread": spread,
        });
        if let Some(rev) = previous {
            publication["prev"] = json!({ "rev": rev, "ms": ms - 200, "rtt_us": 100 });
        }
        publication
    }
}

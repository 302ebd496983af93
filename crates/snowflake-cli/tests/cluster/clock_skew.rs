//! Clock skew between nodes (issue 22): every node measures how far the
//! other clocks are from its own, within a bound, and shows it in
//! `/readyz`, `/metrics` and `cluster status`; it warns beyond
//! `--max-clock-skew-ms`, and never stops issuing for it.
//!
//! The machine has one clock, so a skewed node runs in this process on a
//! clock shifted from the system's by a known amount ([`Shifted`]): the
//! truth every estimate is held to. Every estimate must hold the truth
//! within the bound it states.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::Value;
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
/// furthest off, its bound, and how many nodes the report covers.
#[derive(Debug, Clone, Copy)]
struct Skew {
    offset_ms: f64,
    bound_ms: f64,
    nodes: u64,
}

impl Skew {
    /// From `/readyz`'s `clock_skew`; `None` until a clock is measured.
    fn from_json(skew: &Value) -> Option<Skew> {
        Some(Skew {
            offset_ms: skew["max_offset_ms"].as_f64()?,
            bound_ms: skew["bound_ms"].as_f64()?,
            nodes: skew["nodes"].as_u64()?,
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
    Skew {
        offset_ms: clock["offset_ms"].as_f64().expect("an offset"),
        bound_ms: clock["bound_ms"].as_f64().expect("a bound"),
        nodes: 1,
    }
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
    Skew {
        offset_ms: words[at - 1].parse().unwrap(),
        bound_ms: words[at].trim_start_matches('±').parse().unwrap(),
        nodes: 1,
    }
    .assert_holds(truth_ms, &format!("cluster status, {row}"));
}

/// The line a node logs when a clock is certainly too far off.
const WARNING: &str = "beyond --max-clock-skew-ms 100";

/// Two nodes on the same clock: each measures the other within its bound
/// of zero, shows it in `/readyz`, `/metrics` and `cluster status`, and
/// does not warn.
#[test]
fn clocks_that_agree_are_measured_within_their_bound_of_zero_and_nothing_warns() {
    let scene = Scene::start();
    let endpoints = scene.etcd.endpoints();
    let nodes = [scene.node(&[]), scene.node(&[])];
    let refs: Vec<&Node> = nodes.iter().collect();
    let skews: Vec<Skew> = nodes
        .iter()
        .map(|node| {
            poll(
                Duration::from_secs(20),
                "the node never measured the other's clock",
                || Skew::of_node(node).filter(|skew| skew.nodes == 1),
                || describe(&refs),
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
        assert!(ready["clock_skew"]["peer"]["slot"].is_string(), "{ready}");
    }
    for node in &nodes {
        assert_status_shows(&endpoints, &node.slot(), 0.0);
    }
    // A warning comes at the renewal after a measurement: give it a few.
    std::thread::sleep(Duration::from_secs(TTL_S));
    for node in &nodes {
        assert!(!node.log().contains(WARNING), "{}", node.describe());
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
/// measure everyone; the other two measure the referees and learn of the
/// rest from what the referees publish. The clock of one of those two is
/// moved 500 ms ahead: the other, which never measures it, still reports
/// it within the bound, as does every node.
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
    // Every node covers the four others, whether it measures them or
    // reads of them in a referee's spread.
    for node in &nodes {
        poll(
            Duration::from_secs(30),
            "a node never covered the four others",
            || Skew::of_in_process(node).filter(|skew| skew.nodes == 4),
            context,
        );
    }
    // Which nodes are not referees: the slots published under the keys
    // after the first three.
    let keys = scene.etcd.keys_under("/snowflake/test/clocks/");
    assert_eq!(keys.len(), 5, "{keys:?}");
    let others: Vec<usize> = keys[3..]
        .iter()
        .map(|key| {
            let value: Value = serde_json::from_slice(&scene.etcd.get(key).unwrap()).unwrap();
            let slot = value["slot"].as_str().unwrap();
            slots.iter().position(|s| s == slot).unwrap()
        })
        .collect();
    let (moved, watcher) = (others[0], others[1]);
    clocks[moved].0.store(SHIFT_MS as i64, Ordering::Relaxed);
    for (i, node) in nodes.iter().enumerate() {
        let truth = if i == moved { -SHIFT_MS } else { SHIFT_MS };
        let skew = poll(
            Duration::from_secs(30),
            "a node never saw the clock move",
            || Skew::of_in_process(node).filter(|skew| skew.offset_ms.abs() > SHIFT_MS / 2.0),
            context,
        );
        let whose = if i == watcher {
            "the node that learns of it only through the referees"
        } else {
            "a node"
        };
        skew.assert_holds(truth, whose);
        assert_eq!(skew.nodes, 4, "{whose}: {skew:?}");
    }
    let status = nodes[watcher].cluster.status().clock_skew;
    assert_eq!(
        status.peer.as_ref().and_then(|peer| peer.slot.as_deref()),
        Some(slots[moved].as_str()),
        "moved {moved}, watcher {watcher}, keys {keys:?}\n{}",
        context()
    );
}

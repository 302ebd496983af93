//! Cluster mode end to end: a real three-member etcd cluster on loopback,
//! real `snowflake serve` nodes, and nodes run in this process where the
//! test must set their clock. What it covers:
//!
//! - slots: nodes starting together get distinct slots; `cluster status`
//!   lists them, and lists what etcd holds without trusting it (a forged
//!   hostname, a slot key that is not a holder record, a damaged mark); a
//!   slot key under a node's own lease that it never heard it took is let
//!   go; 64 nodes take every slot of a 64-slot layout once, a 65th is
//!   refused until one is killed (`cluster/many.rs`, which also holds the
//!   1,024-node measurement that `bench/cluster.sh` runs);
//! - handing a slot on above every ID issued in it, because of the slot's
//!   mark and not the time that passed: after a kill, after a clean stop
//!   (whose mark is read back from etcd), after the slot's key was deleted
//!   by hand, and to a node whose clock is behind the mark;
//! - the fence: a node cut off from etcd stops issuing before its last
//!   renewal, as sent, plus the TTL less the margin, and never issues once
//!   the next holder has; a paused node wakes fenced; all of etcd stopping
//!   stops every node until it is back; losing the etcd leader stops none;
//! - what only an operator can mend: a damaged mark keeps its slot unused,
//!   and the node takes it once the mark is mended, without a restart;
//! - reaching etcd: mutual TLS, and a password refused over plain http;
//! - clock skew between nodes (`cluster/clock_skew.rs`): measured within
//!   its stated bound of a known shift, shown and warned of, never
//!   stopping a node.
//!
//! Every scenario collects every ID every node handed out and checks, by
//! sorting, that none repeats. Outcomes are decided by polling with
//! deadlines derived from the TTL and the margin, never by a fixed sleep.
//! Only a 503 counts as a node refusing: no answer in time is not one. A
//! failure shows the answers and the logs of the nodes involved.
//!
//! The harness lives in `tests/support/` (etcd, nodes, in-process nodes,
//! the proxy, TLS, and what every scenario shares); it is included here by
//! path, since the other test binaries share `support/mod.rs` but not it.
//!
//! Needs `etcd` and `openssl` on the PATH (Debian's etcd-server);
//! `./scripts/test` installs them.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowflake::{Clock, ManualClock, SystemClock};

#[path = "cluster/clock_skew.rs"]
mod clock_skew;
#[path = "support/etcd.rs"]
mod etcd;
#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/in_process.rs"]
mod in_process;
#[path = "support/load.rs"]
mod load;
#[path = "cluster/many.rs"]
mod many;
#[path = "support/node.rs"]
mod node;
#[path = "support/proxy.rs"]
mod proxy;
#[path = "support/scenario.rs"]
mod scenario;
mod support;
#[path = "support/tls.rs"]
mod tls;

use in_process::InProcess;
use node::{
    Node, Reply, assert_no_duplicates, cluster_status, cluster_status_json, describe, slot_args,
    slot_of, time_of,
};
use proxy::Proxy;
use scenario::{Scene, TTL_S, poll, scratch, serial, signal};
use tls::{TlsEtcd, make_certificates, status_over_tls};

/// The key of `slot`'s holder and of its mark, in cluster `test`.
fn slot_key(slot: &str) -> String {
    format!("/snowflake/test/slots/{slot}")
}

fn mark_key(slot: &str) -> String {
    format!("/snowflake/test/marks/{slot}")
}

/// The mark of `slot` as stored in etcd; fails the test if there is none
/// or it is not a number.
fn stored_mark(scene: &Scene, slot: &str) -> i64 {
    let value = scene
        .etcd
        .get(&mark_key(slot))
        .unwrap_or_else(|| panic!("slot {slot} has no mark in etcd"));
    String::from_utf8(value).unwrap().trim().parse().unwrap()
}

fn now_ms() -> i64 {
    SystemClock.now_ms()
}

// ----------------------------------------------------------------- slots

#[test]
fn five_nodes_starting_together_get_five_slots() {
    let scene = Scene::start();
    let mut nodes: Vec<Node> = (0..5).map(|_| scene.node(&[])).collect();
    let mut slots: Vec<String> = nodes
        .iter()
        .map(|n| {
            n.wait_ready(Duration::from_secs(20))["slot"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for node in &mut nodes {
        for _ in 0..5 {
            let ids = node.ids(1000);
            let slot = slot_of(ids[0]);
            assert!(ids.iter().all(|id| slot_of(*id) == slot));
        }
    }
    slots.sort();
    slots.dedup();
    assert_eq!(slots.len(), 5, "two nodes share a slot: {slots:?}");
    let listed = cluster_status_json(&scene.etcd.endpoints());
    assert_eq!(listed.len(), 5, "{listed:?}");
    for entry in &listed {
        assert!(entry["pid"].as_u64().is_some() && entry["hostname"].is_string());
        assert!(
            entry["address"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:")
        );
    }
    let refs: Vec<&Node> = nodes.iter().collect();
    assert_eq!(assert_no_duplicates(&refs), 25_000);
}

/// Whatever is under the cluster's keys, `cluster status` shows it as it
/// is: a hostname with a newline cannot forge a line of the table, control
/// characters are shown escaped, a slot whose value is not a holder record
/// is listed as occupied and unreadable (nodes do treat it as taken), and
/// a damaged mark is listed as damaged, not as absent.
#[test]
fn cluster_status_shows_what_etcd_holds_without_trusting_it() {
    let scene = Scene::start();
    // A real holder too, on a slot other than those written by hand below.
    let node = scene.node(&["--datacenter", "0", "--machine", "0"]);
    node.wait_ready(Duration::from_secs(20));
    let forged = "evil\ndatacenter=29,machine=29       forged                     1";
    let record = serde_json::json!({
        "hostname": forged,
        "pid": 1,
        "address": "http://x/\u{1b}[2J",
        "since_ms": 0,
    });
    scene.etcd.put(
        &slot_key("datacenter=30,machine=30"),
        record.to_string().as_bytes(),
    );
    scene
        .etcd
        .put(&slot_key("datacenter=31,machine=31"), b"not a record");
    scene
        .etcd
        .put(&mark_key("datacenter=31,machine=31"), b"12x\x1b[0m");
    let endpoints = scene.etcd.endpoints();
    let table = cluster_status(&endpoints, &[]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines.len(),
        4,
        "a header and three slots:\n{table}\n{}",
        node.describe()
    );
    let forged_line = forged.lines().nth(1).unwrap();
    assert!(
        !lines.iter().any(|l| l.starts_with(forged_line)),
        "a hostname forged a line:\n{table}"
    );
    assert!(
        !table.chars().any(|c| c.is_control() && c != '\n'),
        "{table:?}"
    );
    let unreadable = lines
        .iter()
        .find(|l| l.starts_with("datacenter=31,machine=31"))
        .unwrap_or_else(|| panic!("the unreadable slot is missing:\n{table}"));
    assert!(
        unreadable.contains("occupied, unreadable") && unreadable.contains("mark damaged"),
        "{table}"
    );
    let json = cluster_status_json(&endpoints);
    assert_eq!(json.len(), 3, "{json:?}");
    let entry = |slot: &str| json.iter().find(|e| e["slot"] == slot).unwrap();
    let damaged = entry("datacenter=31,machine=31");
    assert!(damaged["unreadable"].is_string(), "{damaged}");
    assert!(damaged["mark_ms"].is_null() && damaged["mark_error"].is_string());
    assert_eq!(entry("datacenter=30,machine=30")["hostname"], forged);
    // A node fixed to the unreadable slot finds it taken.
    let contender = scene.node(&["--datacenter", "31", "--machine", "31"]);
    contender.wait_contending();
}

/// A node's create of its slot key reached etcd but the answer was lost (a
/// timeout under load): the key is under the node's own lease, and its
/// renewals would keep the slot from every node for as long as it lives.
/// The next time it claims, the node lets that key go and claims again.
#[test]
fn a_slot_key_under_a_nodes_own_lease_that_it_never_heard_it_took_is_let_go() {
    let scene = Scene::start();
    let slot = "datacenter=0,machine=0";
    // Taken by hand, with no lease: the node, fixed to that slot, waits.
    scene.etcd.put(&slot_key(slot), b"taken by hand");
    let clock = Arc::new(ManualClock::new(now_ms()));
    let node = InProcess::start(in_process::config(&scene.etcd, slot, clock));
    let lease = poll(
        Duration::from_secs(10),
        "the node never waited with a lease of its own",
        || {
            let waiting = node
                .cluster
                .status()
                .state
                .contains("all 1 slots are taken");
            match scene.etcd.leases()[..] {
                [lease] if waiting => Some(lease),
                _ => None,
            }
        },
        || {
            format!(
                "{:?}, leases {:?}",
                node.cluster.status(),
                scene.etcd.leases()
            )
        },
    );
    // What a create whose answer was lost leaves behind.
    let record = br#"{"hostname":"test","pid":1,"address":"in-process","since_ms":0}"#;
    scene.etcd.put_under_lease(&slot_key(slot), record, lease);
    let holding = node.holding(Duration::from_secs(10), String::new);
    assert_eq!(holding.slot.to_string(), slot);
    assert_eq!(scene.etcd.leases(), vec![lease], "the node kept its lease");
}

// ------------------------------------------------- handing a slot on

/// A killed node leaves its mark; the heir, whose clock is set *behind* the
/// dead node's last ID, must start above that ID: only the mark can make it
/// do so, not the time that passed while the lease ran out.
#[test]
fn a_killed_nodes_slot_is_taken_over_above_its_ids_because_of_the_mark() {
    let scene = Scene::start();
    let mut dead = scene.node(&[]);
    dead.wait_ready(Duration::from_secs(20));
    let slot = dead.slot();
    for _ in 0..20 {
        dead.ids(500);
    }
    signal(dead.pid(), "KILL");
    let max_dead = *dead.issued.iter().max().unwrap();
    // A clock two seconds behind the dead node's last ID, and a reserve
    // wide enough that the heir waits for the mark rather than refusing it.
    let clock = Arc::new(ManualClock::new(time_of(max_dead) - 2_000));
    let mut config = in_process::config(&scene.etcd, &slot, clock);
    config.reserve_ms = 30_000;
    let heir = InProcess::start(config);
    let holding = heir.holding(Duration::from_secs(TTL_S + 15), || dead.describe());
    assert_eq!(holding.slot.to_string(), slot);
    let ids = heir.ids(&holding, 1000);
    let below = ids.iter().filter(|id| **id <= max_dead).count();
    assert_eq!(
        below, 0,
        "the heir issued {below} IDs at or below the dead node's last ID {max_dead}"
    );
}

/// With one slot for two nodes, a node shut down cleanly lowers its slot's
/// mark to its last ID before it lets go. The mark read back from etcd lies
/// between that ID's time and now (not lowered too far, not deleted, not
/// left a TTL ahead); the next holder, whose clock is set behind that ID,
/// takes the slot well within the stopped node's TTL and starts above the
/// ID: only the mark can put it there.
#[test]
fn a_cleanly_stopped_nodes_slot_is_free_at_once_and_its_mark_covers_its_ids() {
    let scene = Scene::start();
    let slot = "datacenter=3,machine=9";
    // A long lease: without the lowered mark the next holder would wait
    // about 11 s (the reserve plus the TTL) before it could issue.
    let one_slot = ["--datacenter", "3", "--machine", "9", "--lease-ttl", "10"];
    let mut first = scene.node(&one_slot);
    first.wait_ready(Duration::from_secs(20));
    for _ in 0..10 {
        first.ids(1000);
    }
    // Idle past the generator's own reserve window (1 s), as a node about
    // to be stopped often is: its last ID must still be found.
    std::thread::sleep(Duration::from_millis(1500));
    signal(first.pid(), "TERM");
    let status = first.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "{status}\n{}", first.describe());
    let stopped = Instant::now();
    let last = *first.issued.iter().max().unwrap();
    let mark = stored_mark(&scene, slot);
    let now = now_ms();
    assert!(
        time_of(last) <= mark && mark <= now,
        "the mark after a clean stop is {mark}; the last ID's time is {}, now is {now}\n{}",
        time_of(last),
        first.describe()
    );
    let clock = Arc::new(ManualClock::new(time_of(last) - 2_000));
    let mut config = in_process::config(&scene.etcd, slot, clock);
    config.reserve_ms = 30_000;
    let heir = InProcess::start(config);
    let holding = heir.holding(Duration::from_secs(5), || first.describe());
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "the slot was taken {:?} after the clean stop",
        stopped.elapsed()
    );
    let ids = heir.ids(&holding, 1000);
    assert!(
        ids.iter().all(|id| *id > last),
        "the next holder issued at or below the stopped node's last ID {last}"
    );
}

/// `etcdctl del` of a running node's slot key (a clean-up script, a
/// restore): the node gives the slot up at once (not ready, nothing more
/// from that slot), and takes a slot again without a restart; the next
/// holder of the deleted slot starts above its mark, which the node could
/// no longer raise once its key was gone.
#[test]
fn a_node_whose_slot_key_is_deleted_gives_the_slot_up_at_once_and_takes_one_again() {
    let scene = Scene::start();
    let mut node = scene.node(&[]);
    node.wait_ready(Duration::from_secs(20));
    let slot = node.slot();
    node.ids(1000);
    // A second node wants exactly that slot: it waits while it is held.
    let args = slot_args(&slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut heir = scene.node(&args);
    heir.wait_contending();
    assert!(
        scene.etcd.delete(&slot_key(&slot)),
        "the slot key was not there"
    );
    // Read at once: neither the node (its key is gone) nor the heir (the
    // mark is ahead of its clock) can have moved it since.
    let mark = stored_mark(&scene, &slot);
    // The slot is given up on the watch's event, a round trip to etcd; half
    // the TTL is far more than that takes, and far less than the seconds
    // for which a node that did not notice would stay ready.
    poll(
        Duration::from_secs(TTL_S) / 2,
        "the node still said ready after its slot key was deleted",
        || matches!(node.readyz(), Some((503, _))).then_some(()),
        || node.describe(),
    );
    let since = node.issued.len();
    assert!(
        node.log().contains("its key was deleted from etcd"),
        "{}",
        node.describe()
    );
    // It takes a slot again without a restart.
    let ready = node.wait_ready(Duration::from_secs(TTL_S + 10));
    for _ in 0..5 {
        node.ids(1000);
    }
    let from_old_slot: Vec<u64> = node.issued[since..]
        .iter()
        .copied()
        .filter(|id| slot_of(*id) == slot && time_of(*id) <= mark)
        .collect();
    assert!(
        from_old_slot.is_empty(),
        "the node issued {} IDs in {slot} at or below its mark {mark} after giving it up (now on {})",
        from_old_slot.len(),
        ready["slot"]
    );
    // The heir takes the deleted slot, above the mark.
    let taken = heir.wait_ready(Duration::from_secs(TTL_S + 15));
    assert_eq!(taken["slot"], slot.as_str());
    let ids = heir.ids(1000);
    assert!(
        ids.iter().all(|id| time_of(*id) > mark),
        "the heir issued at or below the mark {mark}\n{}",
        describe(&[&node, &heir])
    );
    assert_no_duplicates(&[&node, &heir]);
}

/// In process, with a clock that is an hour behind the mark the slot's last
/// holder left: the node does not issue into the past, says why, and takes
/// the slot once its clock has passed the mark.
#[test]
fn a_node_behind_the_slots_mark_does_not_issue_into_the_past() {
    let scene = Scene::start();
    let now = now_ms();
    let mark = now + 3_600_000;
    let slot = "datacenter=0,machine=0";
    scene.etcd.put(&mark_key(slot), mark.to_string().as_bytes());
    let clock = Arc::new(ManualClock::new(now));
    let node = InProcess::start(in_process::config(&scene.etcd, slot, clock.clone()));
    poll(
        Duration::from_secs(10),
        "the node never said it is behind the mark",
        || {
            let state = node.cluster.status().state;
            state.contains("behind the high-water mark").then_some(())
        },
        || format!("{:?}", node.cluster.status()),
    );
    assert!(node.cluster.current().is_err());
    // The clock catches up: the node takes the slot, above the mark.
    clock.set(mark + 1);
    let holding = node.holding(Duration::from_secs(10), String::new);
    let ids = node.ids(&holding, 1);
    assert!(time_of(ids[0]) > mark);
}

// ------------------------------------------------------------ the fence

/// The logs of the cut-off node and, once started, its heir.
fn both(cut_off: &Node, heir: &Option<Node>) -> String {
    match heir {
        Some(heir) => describe(&[cut_off, heir]),
        None => cut_off.describe(),
    }
}

/// How long the proxy holds back etcd's answers in the partition scenario.
const DELAY: Duration = Duration::from_millis(200);

/// A network partition: the node's path to etcd is cut while its clients
/// still reach it; a node that still reaches etcd then wants the same
/// slot. The test asks both in turn.
///
/// The fence is timed against the node's renewals, observed from outside:
/// the node reaches etcd through a proxy that holds back every answer by
/// `DELAY`, and logs a line once each renewal's answer has arrived; the
/// test notes when each line appears. So the last renewal was sent at least
/// `DELAY` before its line appeared, and the node must stop by then plus
/// the TTL less the margin. A fence with no margin issues the margin too
/// long; one timed from the renewal's answer, `DELAY` too long: both fail.
#[test]
fn a_node_cut_off_from_etcd_stops_by_its_last_renewal_plus_ttl_less_margin() {
    let scene = Scene::start();
    // Renewals may take TTL/6 = 500 ms, room for the answers held back.
    let ttl = Duration::from_secs(3);
    // The README's margin: a quarter of the TTL, at least 0.5 s.
    let margin = Duration::from_millis(750);
    let mut proxy = Proxy::delaying_answers(scene.etcd.member(0), DELAY);
    let one_slot = ["--datacenter", "1", "--machine", "2", "--lease-ttl", "3"];
    let mut cut_off = Node::start_logging_renewals(&proxy.endpoint(), &one_slot);
    cut_off.wait_ready(Duration::from_secs(20));
    for _ in 0..10 {
        cut_off.ask(1000);
    }
    assert!(
        proxy.accepted() > 0,
        "cannot set up the partition: the node never connected through the proxy"
    );
    // Cut just after a renewal, while the node issues (on a loaded machine
    // it may have had to take its slot again): the fence then has most of
    // the TTL to run. When the request of the node's last 200 was sent:
    let renewals = cut_off.renewals();
    let give_up = Instant::now() + Duration::from_secs(30);
    let mut last_issue = loop {
        let before = renewals.count();
        let next = Instant::now() + ttl;
        while (before == 0 || renewals.count() == before) && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(2));
        }
        let sent = Instant::now();
        if before > 0 && renewals.count() > before && matches!(cut_off.ask(100), Reply::Ids(_)) {
            break sent;
        }
        assert!(
            Instant::now() < give_up,
            "the node never renewed its lease while issuing\n{}",
            cut_off.describe()
        );
    };
    proxy.cut();
    let cut = Instant::now();
    // The heir starts now, in the background while the test asks the
    // cut-off node: started before the cut, it could take the slot whenever
    // a loaded machine made the cut-off node take it again.
    let endpoints = scene.etcd.endpoints();
    let mut starting = Some(std::thread::spawn(move || {
        Node::start(&endpoints, &one_slot)
    }));
    let mut heir: Option<Node> = None;
    // When the cut-off node first refused, and when the heir's first 200 came.
    let mut refused: Option<Instant> = None;
    let mut heir_issued: Option<Instant> = None;
    while heir_issued.is_none_or(|t| t.elapsed() < Duration::from_secs(1)) {
        assert!(
            cut.elapsed() < ttl * 5,
            "the heir never took the slot\n{}",
            both(&cut_off, &heir)
        );
        let sent = Instant::now();
        match cut_off.ask(100) {
            Reply::Ids(_) => {
                assert!(
                    heir_issued.is_none(),
                    "the cut-off node issued after the heir had: two holders of one slot\n{}",
                    both(&cut_off, &heir)
                );
                assert!(
                    refused.is_none(),
                    "the cut-off node issued again after refusing\n{}",
                    cut_off.describe()
                );
                last_issue = sent;
            }
            Reply::Refused(_) => {
                refused.get_or_insert_with(Instant::now);
            }
            other => panic!(
                "the cut-off node did not answer its client: {other:?}\n{}",
                cut_off.describe()
            ),
        }
        if starting.as_ref().is_some_and(|s| s.is_finished()) {
            heir = starting.take().map(|s| s.join().unwrap());
        }
        if let Some(heir) = &mut heir {
            match heir.ask(100) {
                Reply::Ids(_) => {
                    heir_issued.get_or_insert_with(Instant::now);
                }
                Reply::Refused(_) => {}
                other => panic!("the heir did not answer: {other:?}\n{}", heir.describe()),
            }
        }
    }
    let heir = heir.unwrap();
    let renewed = renewals.last().unwrap();
    let deadline = renewed - DELAY + ttl - margin;
    assert!(
        last_issue <= deadline,
        "the cut-off node issued {:?} after its last renewal could have been sent plus the \
         TTL less the margin (renewal seen {:?} before the cut, first refusal {:?} after it)\n{}",
        last_issue - deadline,
        cut.saturating_duration_since(renewed),
        refused.map(|r| r - cut),
        cut_off.describe()
    );
    let max_cut_off = *cut_off.issued.iter().max().unwrap();
    assert!(
        heir.issued.iter().all(|id| *id > max_cut_off),
        "the heir issued at or below the cut-off node's IDs\n{}",
        describe(&[&cut_off, &heir])
    );
    assert_no_duplicates(&[&cut_off, &heir]);
}

#[test]
fn a_paused_node_fences_itself_when_its_slot_is_taken() {
    let scene = Scene::start();
    let mut paused = scene.node(&[]);
    paused.wait_ready(Duration::from_secs(20));
    let slot = paused.slot();
    for _ in 0..10 {
        paused.ids(1000);
    }
    // A second node wants exactly that slot: it waits while it is held.
    let args = slot_args(&slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut heir = scene.node(&args);
    heir.wait_contending();
    assert!(paused.ready().is_some(), "{}", paused.describe());
    signal(paused.pid(), "STOP");
    assert_eq!(
        heir.wait_ready(Duration::from_secs(TTL_S + 10))["slot"],
        slot.as_str()
    );
    for _ in 0..10 {
        heir.ids(1000);
    }
    signal(paused.pid(), "CONT");
    // Straight after waking, and for a while after: nothing from that slot,
    // and at least one refusal (a 503; no answer in time is not one).
    let woke = Instant::now();
    let mut refused = 0;
    while woke.elapsed() < Duration::from_secs(TTL_S + 1) {
        match paused.ask(100) {
            Reply::Ids(ids) => assert!(
                ids.iter().all(|id| slot_of(*id) != slot),
                "the paused node issued from {slot} after losing it\n{}",
                describe(&[&paused, &heir])
            ),
            Reply::Refused(_) => refused += 1,
            Reply::Silent => {}
            other => panic!("{other:?}\n{}", paused.describe()),
        }
        heir.ids(100);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        refused > 0,
        "the paused node never refused (503) after waking\n{}",
        paused.describe()
    );
    assert_no_duplicates(&[&paused, &heir]);
}

#[test]
fn all_of_etcd_stopping_stops_the_nodes_before_the_ttl_until_it_is_back() {
    let scene = Scene::start();
    let mut nodes: Vec<Node> = (0..3).map(|_| scene.node(&[])).collect();
    for node in &mut nodes {
        node.wait_ready(Duration::from_secs(20));
        node.ids(1000);
    }
    scene.etcd.signal_all("STOP");
    let stopped = Instant::now();
    for node in &mut nodes {
        // Only a 503 counts: a node that hangs has not stopped issuing.
        let left = Duration::from_secs(TTL_S).saturating_sub(stopped.elapsed());
        let description = node.describe();
        poll(
            left,
            "a node did not refuse (503) within a TTL of etcd stopping",
            || matches!(node.ask(10), Reply::Refused(_)).then_some(()),
            || description.clone(),
        );
        assert!(node.ready().is_none(), "{}", node.describe());
    }
    scene.etcd.signal_all("CONT");
    // They recover without a restart.
    for node in &mut nodes {
        node.wait_ready(Duration::from_secs(30));
        node.ids(1000);
    }
    let refs: Vec<&Node> = nodes.iter().collect();
    assert_no_duplicates(&refs);
}

#[test]
fn losing_the_etcd_leader_does_not_stop_the_nodes() {
    let mut scene = Scene::start();
    // The longest TTL the scenarios use (3 s): most of it is there for etcd
    // to elect a new leader.
    let mut nodes: Vec<Node> = (0..3).map(|_| scene.node(&["--lease-ttl", "3"])).collect();
    for node in &nodes {
        node.wait_ready(Duration::from_secs(20));
    }
    let leader = scene.etcd.leader();
    scene.etcd.kill(leader);
    // A window to measure in, not a sleep that decides anything.
    let start = Instant::now();
    let mut last_ok = vec![Instant::now(); nodes.len()];
    let mut worst_gap = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(3 * TTL_S) {
        for (i, node) in nodes.iter_mut().enumerate() {
            if let Reply::Ids(_) = node.ask(200) {
                worst_gap = worst_gap.max(last_ok[i].elapsed());
                last_ok[i] = Instant::now();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (i, t) in last_ok.iter().enumerate() {
        worst_gap = worst_gap.max(t.elapsed());
        let ready = nodes[i].ready();
        assert!(
            ready.is_some(),
            "node {i} is not ready after the leader died: {:?}\n{}",
            nodes[i].readyz(),
            nodes[i].describe()
        );
        assert_eq!(
            ready.unwrap()["fencing_events"],
            0,
            "node {i} fenced itself\n{}",
            nodes[i].describe()
        );
    }
    let refs: Vec<&Node> = nodes.iter().collect();
    assert!(
        worst_gap < Duration::from_secs(TTL_S),
        "a node stopped issuing for {worst_gap:?} after the etcd leader was killed\n{}",
        describe(&refs)
    );
    // Each node keeps its slot's mark the reserve plus the TTL ahead of the
    // clock, topped up at a renewal (every fifth of the TTL) once it is
    // within a fifth of the TTL of that: so no request waits on etcd, and
    // the next holder after a crash finds it at most the reserve ahead. It
    // stays at least the reserve plus three fifths of the TTL ahead, less
    // any delay; half that excess is the bound. Without the top-ups it
    // would be only the generator's own reserve ahead.
    let (reserve, ttl) = (snowflake::Generator::DEFAULT_RESERVE_MS as i64, 3_000);
    for node in &nodes {
        let slot = node.slot();
        let ahead = stored_mark(&scene, &slot) - now_ms();
        assert!(
            ahead > reserve + ttl * 3 / 10 && ahead <= reserve + ttl,
            "the mark of {slot} is {ahead} ms ahead of the clock\n{}",
            node.describe()
        );
    }
    assert_no_duplicates(&refs);
}

// ------------------------------------------------- what an operator mends

/// A node fixed to a slot whose mark in etcd is damaged (not a time), once
/// it has said, at error level, that an operator must act.
fn node_on_a_damaged_mark(scene: &Scene, slot: &str) -> Node {
    scene.etcd.put(&mark_key(slot), b"12x");
    let args = slot_args(slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let node = scene.node(&args);
    poll(
        Duration::from_secs(20),
        "the node never said an operator must mend the mark",
        || {
            let log = node.log();
            (log.contains("ERROR") && log.contains("an operator must")).then_some(())
        },
        || node.describe(),
    );
    node
}

/// A damaged mark is never taken for "no mark": the node does not issue
/// from the slot, names the key in its log, and leaves the slot free; once
/// the operator sets a mark after the slot's last ID, the node takes the
/// slot without a restart, above that mark.
#[test]
fn a_damaged_mark_keeps_its_slot_unused_until_an_operator_mends_it() {
    let scene = Scene::start();
    let slot = "datacenter=1,machine=2";
    let mut node = node_on_a_damaged_mark(&scene, slot);
    assert!(
        node.log()
            .contains(&format!("the mark {} in etcd is \"12x\"", mark_key(slot))),
        "{}",
        node.describe()
    );
    assert!(matches!(node.ask(1), Reply::Refused(_)));
    assert!(matches!(node.readyz(), Some((503, _))));
    let mended = now_ms() + 500;
    scene
        .etcd
        .put(&mark_key(slot), mended.to_string().as_bytes());
    node.wait_ready(Duration::from_secs(TTL_S + 10));
    let ids = node.ids(1000);
    assert!(
        ids.iter().all(|id| time_of(*id) > mended),
        "the node issued at or below the mended mark {mended}"
    );
}

/// Waiting does not mend a damaged mark, so the 503 must not tell clients
/// to retry shortly.
#[test]
fn a_damaged_marks_503_does_not_tell_clients_to_retry() {
    let scene = Scene::start();
    let mut node = node_on_a_damaged_mark(&scene, "datacenter=1,machine=2");
    match node.ask(1) {
        Reply::Refused(answer) => assert_eq!(
            answer.header("retry-after"),
            None,
            "{answer:?}\n{}",
            node.describe()
        ),
        other => panic!("{other:?}"),
    }
}

// -------------------------------------------------------- reaching etcd

/// The whole refusal, as an operator sees it: exit 2 and one line that says
/// why and how to proceed, before any connection is tried.
#[test]
fn a_password_over_http_is_refused_with_exit_2() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("snowflake"))
        .args(["cluster", "status", "--etcd", "http://127.0.0.1:9"])
        .args(["--etcd-user", "alice"])
        .env("SNOWFLAKE_ETCD_PASSWORD", "secret")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--etcd-allow-plaintext-password"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "{stderr}");
}

/// Mutual TLS end to end: etcd wants a client certificate; a node given
/// the CA and its certificate joins and issues; without the certificate it
/// is refused; without --etcd-ca it trusts the system's roots (here, made
/// to hold the test CA through SSL_CERT_FILE, which the system-roots loader
/// reads), and with the ordinary roots the test CA is not trusted.
#[test]
fn mutual_tls_to_etcd_with_the_given_ca_or_the_systems_roots() {
    let _serial = serial();
    let dir = scratch().join("tls");
    std::fs::create_dir_all(&dir).unwrap();
    make_certificates(&dir);
    let etcd = TlsEtcd::start(&dir);
    let client_cert = ["--etcd-cert", "client.pem", "--etcd-key", "client.key"];
    let with_ca = [&["--etcd-ca", "ca.pem"][..], &client_cert[..]].concat();
    let (ok, stderr) = status_over_tls(&etcd, &dir, &with_ca, &[]);
    assert!(ok, "with the CA and a client certificate: {stderr}");
    let (ok, stderr) = status_over_tls(&etcd, &dir, &["--etcd-ca", "ca.pem"], &[]);
    assert!(
        !ok,
        "etcd accepted a client without a certificate: {stderr}"
    );
    let roots = dir.join("ca.pem");
    let (ok, stderr) = status_over_tls(&etcd, &dir, &client_cert, &[("SSL_CERT_FILE", &roots)]);
    assert!(
        ok,
        "without --etcd-ca, the system's roots (SSL_CERT_FILE): {stderr}"
    );
    let (ok, stderr) = status_over_tls(&etcd, &dir, &client_cert, &[]);
    assert!(!ok, "the test CA was trusted without being given");
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");
    // A node joins over mutual TLS and issues.
    let pem = |name: &str| dir.join(name).display().to_string();
    let (ca, cert, key) = (pem("ca.pem"), pem("client.pem"), pem("client.key"));
    let tls = ["--etcd-ca", &ca, "--etcd-cert", &cert, "--etcd-key", &key];
    let mut node = Node::start(&etcd.endpoint, &tls);
    node.wait_ready(Duration::from_secs(20));
    assert_eq!(node.ids(100).len(), 100);
    drop(node);
    drop(etcd);
    let _ = std::fs::remove_dir_all(&dir);
}

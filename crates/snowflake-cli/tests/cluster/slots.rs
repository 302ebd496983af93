//! Slots: nodes starting together get distinct slots; `cluster status`
//! lists what etcd holds without trusting it; a slot key under a node's own
//! lease that it never heard it took is let go.

use super::*;

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

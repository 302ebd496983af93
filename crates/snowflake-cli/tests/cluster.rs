//! Cluster mode against a real three-member etcd cluster on loopback, with
//! real `snowflake serve` nodes. Every scenario collects every ID every node
//! handed out and checks, by sorting, that none repeats.
//!
//! Needs `etcd` on the PATH (Debian's etcd-server); `./scripts/test`
//! installs it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{free_port, http};

mod support;
use snowflake::{Id, Layout};

/// Short leases keep the suite quick.
const TTL: &str = "2";
const TTL_S: u64 = 2;

/// The scenarios run one at a time: each starts its own etcd cluster and
/// nodes, and timing matters on a two-core machine.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
}

// ------------------------------------------------------------------ etcd

struct Member {
    name: String,
    client: String,
    args: Vec<String>,
    child: Option<Child>,
}

/// A three-member etcd cluster in temporary directories; killed and removed
/// when dropped, whatever the test did.
struct Etcd {
    members: Vec<Member>,
    dir: PathBuf,
}

impl Etcd {
    fn start() -> Etcd {
        assert!(
            Command::new("etcd").arg("--version").output().is_ok(),
            "etcd is not installed: run ./scripts/test, or apt-get install etcd-server"
        );
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("snowflake-etcd-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
            .collect();
        let mut members = Vec::new();
        for (i, (client, peer)) in ports.iter().enumerate() {
            let client = format!("http://127.0.0.1:{client}");
            let peer = format!("http://127.0.0.1:{peer}");
            let args = vec![
                format!("--name=m{i}"),
                format!("--data-dir={}", dir.join(format!("m{i}")).display()),
                format!("--listen-client-urls={client}"),
                format!("--advertise-client-urls={client}"),
                format!("--listen-peer-urls={peer}"),
                format!("--initial-advertise-peer-urls={peer}"),
                format!("--initial-cluster={}", initial.join(",")),
                "--initial-cluster-state=new".into(),
                format!("--initial-cluster-token=snowflake-{nanos}"),
                // Fast elections, so that losing the leader costs well under
                // a lease.
                "--heartbeat-interval=50".into(),
                "--election-timeout=500".into(),
                "--logger=zap".into(),
                "--log-level=error".into(),
            ];
            members.push(Member {
                name: format!("m{i}"),
                client,
                args,
                child: None,
            });
        }
        let mut etcd = Etcd { members, dir };
        for i in 0..3 {
            etcd.spawn(i);
        }
        etcd.wait_healthy();
        etcd
    }

    fn spawn(&mut self, i: usize) {
        let member = &mut self.members[i];
        member.child = Some(
            Command::new("etcd")
                .args(&member.args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
    }

    fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        for member in &self.members {
            let addr = member.client.trim_start_matches("http://");
            loop {
                if let Some((200, body)) = http(addr, "GET", "/health", "") {
                    if body.contains("true") {
                        break;
                    }
                }
                assert!(
                    Instant::now() < deadline,
                    "etcd {} not healthy",
                    member.name
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    fn endpoints(&self) -> String {
        self.members
            .iter()
            .map(|m| m.client.clone())
            .collect::<Vec<_>>()
            .join(",")
    }

    fn pid(&self, i: usize) -> u32 {
        self.members[i].child.as_ref().unwrap().id()
    }

    /// The index of the current leader.
    fn leader(&self) -> usize {
        for member in &self.members {
            let addr = member.client.trim_start_matches("http://");
            if let Some((200, body)) = http(addr, "POST", "/v3/maintenance/status", "{}") {
                let v: Value = serde_json::from_str(&body).unwrap();
                let me = v["header"]["member_id"].as_str().unwrap_or("").to_string();
                if v["leader"].as_str() == Some(me.as_str()) {
                    return self
                        .members
                        .iter()
                        .position(|m| m.name == member.name)
                        .unwrap();
                }
            }
        }
        panic!("no etcd member says it is the leader");
    }

    fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            if let Some(child) = &self.members[i].child {
                // A stopped process must be woken to die promptly.
                let _ = Command::new("kill")
                    .args(["-CONT", &child.id().to_string()])
                    .status();
            }
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ----------------------------------------------------------------- nodes

/// A `snowflake serve` node in cluster mode; killed when dropped.
struct Node {
    child: Child,
    addr: String,
    /// Every ID this node handed out.
    issued: Vec<u64>,
}

impl Node {
    fn start(etcd: &Etcd, extra: &[&str]) -> Node {
        let addr = format!("127.0.0.1:{}", free_port());
        let ttl: &[&str] = if extra.contains(&"--lease-ttl") {
            &[]
        } else {
            &["--lease-ttl", TTL]
        };
        let child = Command::new(assert_cmd::cargo::cargo_bin("snowflake"))
            .args(["serve", "--listen", &addr, "--etcd", &etcd.endpoints()])
            .args(["--cluster", "test"])
            .args(ttl)
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(node_log(&addr))
            .spawn()
            .unwrap();
        Node {
            child,
            addr,
            issued: Vec::new(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn ready(&self) -> Option<Value> {
        match http(&self.addr, "GET", "/readyz", "")? {
            (200, body) => serde_json::from_str(&body).ok(),
            _ => None,
        }
    }

    fn wait_ready(&self, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            if let Some(v) = self.ready() {
                return v;
            }
            assert!(Instant::now() < deadline, "node {} not ready", self.addr);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn slot(&self) -> String {
        self.ready().expect("ready")["slot"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Asks for `count` IDs; records and returns them, or the status.
    fn ids(&mut self, count: u32) -> Result<Vec<u64>, u16> {
        match http(
            &self.addr,
            "POST",
            &format!("/api/v1/ids?count={count}"),
            "",
        ) {
            Some((200, body)) => {
                let v: Value = serde_json::from_str(&body).unwrap();
                let ids: Vec<u64> = v["ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|id| id.as_str().unwrap().parse().unwrap())
                    .collect();
                self.issued.extend(&ids);
                Ok(ids)
            }
            Some((status, _)) => Err(status),
            None => Err(0),
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Node logs go to files when SNOWFLAKE_TEST_NODE_LOGS names a directory.
fn node_log(addr: &str) -> Stdio {
    match std::env::var_os("SNOWFLAKE_TEST_NODE_LOGS") {
        Some(dir) => {
            let path = PathBuf::from(dir).join(format!("node-{}.log", addr.replace(':', "-")));
            std::fs::File::create(path).map_or_else(|_| Stdio::null(), Stdio::from)
        }
        None => Stdio::null(),
    }
}

fn slot_of(id: u64) -> String {
    let twitter = Layout::twitter();
    let d = twitter.decode(Id::new(id)).unwrap();
    format!(
        "datacenter={},machine={}",
        d.field("datacenter").unwrap(),
        d.field("machine").unwrap()
    )
}

fn slot_args(slot: &str) -> Vec<String> {
    let mut args = Vec::new();
    for part in slot.split(',') {
        let (name, value) = part.split_once('=').unwrap();
        args.push(format!("--{name}"));
        args.push(value.to_string());
    }
    args
}

/// Sorts everything every node issued and fails on any repeat.
fn assert_no_duplicates(nodes: &[&Node]) -> usize {
    let mut all: Vec<u64> = nodes
        .iter()
        .flat_map(|n| n.issued.iter().copied())
        .collect();
    all.sort_unstable();
    let dups: Vec<u64> = all
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(
        dups.is_empty(),
        "{} duplicate IDs, e.g. {:?}",
        dups.len(),
        &dups[..dups.len().min(5)]
    );
    all.len()
}

fn status_json(etcd: &Etcd) -> Vec<Value> {
    let out = Command::new(assert_cmd::cargo::cargo_bin("snowflake"))
        .args([
            "cluster",
            "status",
            "--json",
            "--cluster",
            "test",
            "--etcd",
            &etcd.endpoints(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

// ------------------------------------------------------------- scenarios

#[test]
fn five_nodes_starting_together_get_five_slots() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut nodes: Vec<Node> = (0..5).map(|_| Node::start(&etcd, &[])).collect();
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
            let ids = node.ids(1000).unwrap();
            assert!(
                ids.iter()
                    .all(|id| slot_of(*id) == ids.first().map(|i| slot_of(*i)).unwrap())
            );
        }
    }
    slots.sort();
    slots.dedup();
    assert_eq!(slots.len(), 5, "two nodes share a slot: {slots:?}");
    let listed = status_json(&etcd);
    assert_eq!(listed.len(), 5);
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

#[test]
fn a_killed_nodes_slot_is_taken_over_above_its_ids() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut dead = Node::start(&etcd, &[]);
    let mut other = Node::start(&etcd, &[]);
    dead.wait_ready(Duration::from_secs(20));
    other.wait_ready(Duration::from_secs(20));
    let slot = dead.slot();
    for _ in 0..20 {
        dead.ids(500).unwrap();
        other.ids(500).unwrap();
    }
    let killed_at = Instant::now();
    signal(dead.pid(), "KILL");
    // The slot is free once the lease has run out.
    loop {
        if !status_json(&etcd)
            .iter()
            .any(|e| e["slot"] == slot.as_str())
        {
            break;
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(TTL_S + 4),
            "slot {slot} still held long after the TTL"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let args = slot_args(&slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut heir = Node::start(&etcd, &args);
    assert_eq!(
        heir.wait_ready(Duration::from_secs(20))["slot"],
        slot.as_str()
    );
    let max_dead = *dead.issued.iter().max().unwrap();
    for _ in 0..5 {
        let ids = heir.ids(1000).unwrap();
        assert!(
            ids.iter().all(|id| *id > max_dead),
            "the heir issued at or below the dead node's IDs"
        );
        other.ids(100).unwrap();
    }
    assert_no_duplicates(&[&dead, &other, &heir]);
}

#[test]
fn losing_the_etcd_leader_does_not_stop_the_nodes() {
    let _serial = serial();
    let mut etcd = Etcd::start();
    // The longest TTL the scenarios use (3 s): most of it is there for etcd
    // to elect a new leader.
    let mut nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(&etcd, &["--lease-ttl", "3"]))
        .collect();
    for node in &nodes {
        node.wait_ready(Duration::from_secs(20));
    }
    let leader = etcd.leader();
    etcd.kill(leader);
    let start = Instant::now();
    let mut last_ok = vec![Instant::now(); nodes.len()];
    let mut worst_gap = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(3 * TTL_S) {
        for (i, node) in nodes.iter_mut().enumerate() {
            if node.ids(200).is_ok() {
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
            "node {i} is not ready after the leader died"
        );
        assert_eq!(
            ready.unwrap()["fencing_events"],
            0,
            "node {i} fenced itself"
        );
    }
    assert!(
        worst_gap < Duration::from_secs(TTL_S),
        "a node stopped issuing for {worst_gap:?} after the etcd leader was killed"
    );
    let refs: Vec<&Node> = nodes.iter().collect();
    assert_no_duplicates(&refs);
}

#[test]
fn a_paused_node_fences_itself_when_its_slot_is_taken() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut paused = Node::start(&etcd, &[]);
    paused.wait_ready(Duration::from_secs(20));
    let slot = paused.slot();
    for _ in 0..10 {
        paused.ids(1000).unwrap();
    }
    // A second node wants exactly that slot: it waits while it is held.
    let args = slot_args(&slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut heir = Node::start(&etcd, &args);
    std::thread::sleep(Duration::from_secs(1));
    assert!(heir.ready().is_none(), "two nodes hold {slot}");
    signal(paused.pid(), "STOP");
    assert_eq!(
        heir.wait_ready(Duration::from_secs(TTL_S + 10))["slot"],
        slot.as_str()
    );
    for _ in 0..10 {
        heir.ids(1000).unwrap();
    }
    signal(paused.pid(), "CONT");
    // Straight after waking, and for a while after: nothing from that slot.
    let woke = Instant::now();
    let mut refused = 0;
    while woke.elapsed() < Duration::from_secs(TTL_S + 1) {
        match paused.ids(100) {
            Ok(ids) => assert!(
                ids.iter().all(|id| slot_of(*id) != slot),
                "the paused node issued from {slot} after losing it"
            ),
            Err(_) => refused += 1,
        }
        heir.ids(100).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(refused > 0, "the paused node never refused after waking");
    assert_no_duplicates(&[&paused, &heir]);
}

#[test]
fn all_of_etcd_stopping_stops_the_nodes_until_it_is_back() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut nodes: Vec<Node> = (0..3).map(|_| Node::start(&etcd, &[])).collect();
    for node in &mut nodes {
        node.wait_ready(Duration::from_secs(20));
        node.ids(1000).unwrap();
    }
    for i in 0..3 {
        signal(etcd.pid(i), "STOP");
    }
    let stopped = Instant::now();
    // Within the TTL every node refuses.
    std::thread::sleep(Duration::from_secs(TTL_S));
    for node in &mut nodes {
        assert!(
            node.ids(10).is_err(),
            "a node issued with etcd down for a whole TTL"
        );
        assert!(node.ready().is_none());
    }
    assert!(stopped.elapsed() < Duration::from_secs(TTL_S + 2));
    for i in 0..3 {
        signal(etcd.pid(i), "CONT");
    }
    // They recover without a restart.
    for node in &mut nodes {
        node.wait_ready(Duration::from_secs(30));
        node.ids(1000).unwrap();
    }
    let refs: Vec<&Node> = nodes.iter().collect();
    assert_no_duplicates(&refs);
}

/// In process, with a clock that is an hour behind the mark the slot's last
/// holder left: the node does not issue into the past, says why, and takes
/// the slot once its clock has passed the mark.
#[test]
fn a_node_behind_the_slots_mark_does_not_issue_into_the_past() {
    let _serial = serial();
    let etcd = Etcd::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let now = snowflake::Clock::now_ms(&snowflake::SystemClock);
    let mark = now + 3_600_000;
    let endpoints: Vec<String> = etcd.endpoints().split(',').map(String::from).collect();
    let clock = Arc::new(snowflake::ManualClock::new(now));
    let config = snowflake_etcd::ClusterConfig {
        endpoints,
        name: "test".into(),
        layout: Layout::twitter(),
        fixed: vec![("datacenter".into(), 0), ("machine".into(), 0)],
        lease_ttl: Duration::from_secs(TTL_S),
        margin: Duration::from_millis(500),
        tolerance_ms: 5,
        reserve_ms: 1000,
        clock: clock.clone(),
        info: snowflake_etcd::NodeInfo {
            hostname: "test".into(),
            pid: std::process::id(),
            address: "in-process".into(),
            since_ms: 0,
        },
        auth: None,
        tls: Default::default(),
    };
    runtime.block_on(async {
        let mut client = snowflake_etcd::connect(&config).await.unwrap();
        client
            .put(
                "/snowflake/test/marks/datacenter=0,machine=0",
                mark.to_string(),
                None,
            )
            .await
            .unwrap();
    });
    let cluster = runtime.block_on(async { snowflake_etcd::Cluster::start(config.clone()) });
    std::thread::sleep(Duration::from_secs(2));
    let err = cluster.current().unwrap_err();
    let state = cluster.status().state;
    assert!(
        state.contains("behind the high-water mark"),
        "{state} / {err}"
    );
    // The clock catches up: the node takes the slot, above the mark.
    clock.set(mark + 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    let holding = loop {
        if let Ok(h) = cluster.current() {
            break h;
        }
        assert!(Instant::now() < deadline, "{}", cluster.status().state);
        std::thread::sleep(Duration::from_millis(100));
    };
    let id = runtime
        .block_on(async { tokio::task::spawn_blocking(move || holding.generator.next_id()).await })
        .unwrap()
        .unwrap();
    let twitter = Layout::twitter();
    assert!(twitter.decode(id).unwrap().timestamp_ms() > mark);
    runtime.block_on(cluster.shutdown());
}

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

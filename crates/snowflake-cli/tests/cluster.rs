//! Cluster mode against a real three-member etcd cluster on loopback, with
//! real `snowflake serve` nodes. Every scenario collects every ID every node
//! handed out and checks, by sorting, that none repeats.
//!
//! Outcomes are decided by polling with deadlines, never by a fixed sleep.
//! A failure shows the response bodies and the logs of the nodes involved:
//! every node's stderr goes to a file, printed in the panic message.
//!
//! Ports: nodes listen on port 0 and the test reads the bound address from
//! the node's log, so there is no race for them. etcd cannot be handed a
//! bound socket, so its ports are picked free and the whole cluster is
//! started again on new ports if a member fails to start.
//!
//! Needs `etcd` on the PATH (Debian's etcd-server); `./scripts/test`
//! installs it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
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

/// A directory of this test process for etcd data and node logs.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("snowflake-cluster-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// Polls `check` until it gives a value; panics with `what` and whatever
/// `context` says at the deadline.
fn poll<T>(
    within: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
    context: impl Fn() -> String,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "{what} (waited {within:?})\n{}",
            context()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ------------------------------------------------------------------ etcd

struct Member {
    name: String,
    client: String,
    args: Vec<String>,
    log: PathBuf,
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
        let mut failures = Vec::new();
        for attempt in 0..3 {
            match Etcd::try_start(attempt) {
                Ok(etcd) => return etcd,
                Err(why) => failures.push(why),
            }
        }
        panic!(
            "etcd did not start in three tries:\n{}",
            failures.join("\n")
        );
    }

    /// Starts a cluster on ports that were free a moment ago; another
    /// process may take one in between, so the caller tries again.
    fn try_start(attempt: u32) -> Result<Etcd, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = scratch().join(format!("etcd-{nanos}-{attempt}"));
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
                log: dir.join(format!("m{i}.log")),
                child: None,
            });
        }
        let mut etcd = Etcd { members, dir };
        for i in 0..3 {
            etcd.spawn(i);
        }
        etcd.wait_healthy()?;
        Ok(etcd)
    }

    fn spawn(&mut self, i: usize) {
        let member = &mut self.members[i];
        let log = std::fs::File::create(&member.log).unwrap();
        member.child = Some(
            Command::new("etcd")
                .args(&member.args)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
    }

    fn wait_healthy(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        for i in 0..self.members.len() {
            let addr = self.members[i]
                .client
                .trim_start_matches("http://")
                .to_string();
            loop {
                if let Some((200, body)) = http(&addr, "GET", "/health", "")
                    && body.contains("true")
                {
                    break;
                }
                let exited = self.members[i]
                    .child
                    .as_mut()
                    .and_then(|c| c.try_wait().ok().flatten());
                if exited.is_some() || Instant::now() > deadline {
                    let member = &self.members[i];
                    return Err(format!(
                        "etcd {} ({}) {}: {}",
                        member.name,
                        member.client,
                        if exited.is_some() {
                            "exited"
                        } else {
                            "not healthy in 30 s"
                        },
                        std::fs::read_to_string(&member.log).unwrap_or_default()
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(())
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
    log: PathBuf,
    /// Every ID this node handed out.
    issued: Vec<u64>,
}

impl Node {
    /// Starts a node that reaches etcd at `endpoints`, and waits until it
    /// listens (not until it is ready).
    fn start(endpoints: &str, extra: &[&str]) -> Node {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let log = scratch().join(format!(
            "node-{}.log",
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let ttl: &[&str] = if extra.contains(&"--lease-ttl") {
            &[]
        } else {
            &["--lease-ttl", TTL]
        };
        let child = Command::new(assert_cmd::cargo::cargo_bin("snowflake"))
            .args(["serve", "--listen", "127.0.0.1:0", "--etcd", endpoints])
            .args(["--cluster", "test"])
            .args(ttl)
            .args(extra)
            .env(
                "RUST_LOG",
                "warn,tower_http=off,snowflake_server::serve=info,snowflake_etcd=info",
            )
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut node = Node {
            child,
            addr: String::new(),
            log,
            issued: Vec::new(),
        };
        node.addr = poll(
            Duration::from_secs(30),
            "the node never said where it listens",
            || {
                let text = std::fs::read_to_string(&node.log).ok()?;
                let rest = text.split("listening on http://").nth(1)?;
                Some(rest.split('/').next()?.to_string())
            },
            || node.describe(),
        );
        node
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The node's address and log, for failure messages.
    fn describe(&self) -> String {
        format!(
            "--- node {} (pid {}), log {}:\n{}",
            self.addr,
            self.child.id(),
            self.log.display(),
            std::fs::read_to_string(&self.log).unwrap_or_default()
        )
    }

    /// `/readyz`: the status and the body.
    fn readyz(&self) -> Option<(u16, String)> {
        http(&self.addr, "GET", "/readyz", "")
    }

    fn ready(&self) -> Option<Value> {
        match self.readyz()? {
            (200, body) => serde_json::from_str(&body).ok(),
            _ => None,
        }
    }

    fn wait_ready(&self, within: Duration) -> Value {
        poll(
            within,
            &format!("node {} not ready", self.addr),
            || self.ready(),
            || format!("last /readyz: {:?}\n{}", self.readyz(), self.describe()),
        )
    }

    fn slot(&self) -> String {
        self.wait_ready(Duration::from_secs(5))["slot"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Asks for `count` IDs; records and returns them, or the status and
    /// body of the refusal.
    fn try_ids(&mut self, count: u32) -> Result<Vec<u64>, String> {
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
            Some((status, body)) => Err(format!("{status}: {body}")),
            None => Err("no answer".into()),
        }
    }

    /// Asks for `count` IDs, which must be given.
    fn ids(&mut self, count: u32) -> Vec<u64> {
        match self.try_ids(count) {
            Ok(ids) => ids,
            Err(why) => panic!("node {} refused IDs: {why}\n{}", self.addr, self.describe()),
        }
    }

    /// Waits for the process to end by itself; its exit status.
    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let child = &mut self.child;
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("node did not exit within {within:?}\n{}", self.describe());
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Kept after a failure: the panic message names it.
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

fn describe(nodes: &[&Node]) -> String {
    nodes
        .iter()
        .map(|n| n.describe())
        .collect::<Vec<_>>()
        .join("\n")
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

fn time_of(id: u64) -> i64 {
    Layout::twitter()
        .decode(Id::new(id))
        .unwrap()
        .timestamp_ms()
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

// ----------------------------------------------------------------- proxy

/// A TCP proxy to one etcd member, as toxiproxy does it: the test can cut
/// every connection through it and refuse new ones, so a node behind it
/// loses etcd while its own clients still reach it.
struct Proxy {
    addr: String,
    cut: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    fn to(upstream: &str) -> Proxy {
        let upstream = upstream.trim_start_matches("http://").to_string();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let acceptor = {
            let (cut, accepted, streams) = (cut.clone(), accepted.clone(), streams.clone());
            std::thread::spawn(move || {
                // The listener is dropped when the cut ends this loop, so
                // that new connections are refused.
                while !cut.load(Ordering::Acquire) {
                    let Ok((client, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    let Ok(server) = TcpStream::connect(&upstream) else {
                        continue;
                    };
                    client.set_nonblocking(false).unwrap();
                    accepted.fetch_add(1, Ordering::Relaxed);
                    let mut open = streams.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                    drop(open);
                    pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                    pipe(server, client);
                }
            })
        };
        Proxy {
            addr,
            cut,
            accepted,
            streams,
            acceptor: Some(acceptor),
        }
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Cuts every connection and refuses new ones; fails the test if the
    /// fault is not in place afterwards.
    fn cut(&mut self) {
        self.cut.store(true, Ordering::Release);
        if let Some(acceptor) = self.acceptor.take() {
            acceptor.join().unwrap();
        }
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        assert!(
            TcpStream::connect_timeout(&self.addr.parse().unwrap(), Duration::from_secs(1))
                .is_err(),
            "cannot set up the partition: the proxy at {} still accepts connections",
            self.addr
        );
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if self.acceptor.is_some() {
            self.cut();
        }
    }
}

/// Copies bytes one way until either side closes.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

// ------------------------------------------------------------- scenarios

#[test]
fn five_nodes_starting_together_get_five_slots() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut nodes: Vec<Node> = (0..5)
        .map(|_| Node::start(&etcd.endpoints(), &[]))
        .collect();
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
    let listed = status_json(&etcd);
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

/// A killed node leaves its mark; the heir, whose clock is set *behind* the
/// dead node's last ID, must start above that ID: only the mark can make it
/// do so, not the time that passed while the lease ran out.
#[test]
fn a_killed_nodes_slot_is_taken_over_above_its_ids_because_of_the_mark() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut dead = Node::start(&etcd.endpoints(), &[]);
    dead.wait_ready(Duration::from_secs(20));
    let slot = dead.slot();
    for _ in 0..20 {
        dead.ids(500);
    }
    signal(dead.pid(), "KILL");
    let max_dead = *dead.issued.iter().max().unwrap();
    // In process, with a clock two seconds behind the dead node's last ID
    // and a reserve wide enough that the heir waits for the mark rather
    // than refusing it.
    let runtime = runtime();
    let clock = Arc::new(snowflake::ManualClock::new(time_of(max_dead) - 2_000));
    let mut config = in_process_config(&etcd, &slot, clock.clone());
    config.reserve_ms = 30_000;
    let heir = runtime.block_on(async { snowflake_etcd::Cluster::start(config) });
    let holding = poll(
        Duration::from_secs(TTL_S + 15),
        "the heir never took the dead node's slot",
        || heir.current().ok(),
        || format!("heir: {:?}\n{}", heir.status(), dead.describe()),
    );
    assert_eq!(holding.slot.to_string(), slot);
    let generator = Arc::clone(&holding.generator);
    let ids: Vec<u64> = runtime
        .block_on(async {
            tokio::task::spawn_blocking(move || {
                (0..1000)
                    .map(|_| generator.next_id().map(|id| id.get()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
        })
        .unwrap()
        .unwrap();
    let below = ids.iter().filter(|id| **id <= max_dead).count();
    assert_eq!(
        below, 0,
        "the heir issued {below} IDs at or below the dead node's last ID {max_dead}"
    );
    runtime.block_on(heir.shutdown());
}

/// With one slot for two nodes, a node shut down cleanly lowers its slot's
/// mark to its last ID before it lets go: the next node is ready well
/// within a TTL, although the mark was kept a TTL ahead of the clock.
#[test]
fn a_cleanly_stopped_nodes_slot_is_free_at_once_and_above_its_ids() {
    let _serial = serial();
    let etcd = Etcd::start();
    // A long lease: without the lowered mark the next node would wait
    // about 11 s (the reserve plus the TTL) before it could issue.
    let one_slot = ["--datacenter", "3", "--machine", "9", "--lease-ttl", "10"];
    let mut first = Node::start(&etcd.endpoints(), &one_slot);
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
    let mut next = Node::start(&etcd.endpoints(), &one_slot);
    let waited = poll(
        Duration::from_secs(5),
        "the next node was not ready within 5 s of the clean stop",
        || next.ready().map(|_| stopped.elapsed()),
        || describe(&[&first, &next]),
    );
    assert!(
        waited < Duration::from_secs(5),
        "the next node needed {waited:?} to be ready\n{}",
        describe(&[&first, &next])
    );
    let max_first = *first.issued.iter().max().unwrap();
    let ids = next.ids(1000);
    assert!(
        ids.iter().all(|id| *id > max_first),
        "the next node issued at or below the stopped node's IDs"
    );
    assert_no_duplicates(&[&first, &next]);
}

#[test]
fn losing_the_etcd_leader_does_not_stop_the_nodes() {
    let _serial = serial();
    let mut etcd = Etcd::start();
    // The longest TTL the scenarios use (3 s): most of it is there for etcd
    // to elect a new leader.
    let mut nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(&etcd.endpoints(), &["--lease-ttl", "3"]))
        .collect();
    for node in &nodes {
        node.wait_ready(Duration::from_secs(20));
    }
    let leader = etcd.leader();
    etcd.kill(leader);
    // A window to measure in, not a sleep that decides anything.
    let start = Instant::now();
    let mut last_ok = vec![Instant::now(); nodes.len()];
    let mut worst_gap = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(3 * TTL_S) {
        for (i, node) in nodes.iter_mut().enumerate() {
            if node.try_ids(200).is_ok() {
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
    assert_no_duplicates(&refs);
}

/// Waits until `node` is up and says, in its log, that every slot it may
/// take is held, while `/readyz` answers 503: it is contending, not merely
/// not started. (The 503 body is the same for every reason; the reason
/// goes to the log.)
fn wait_contending(node: &Node) {
    poll(
        Duration::from_secs(20),
        "the second node never said the slot is taken",
        || {
            let log = std::fs::read_to_string(&node.log).ok()?;
            let contending = log.contains("slots are taken");
            (contending && matches!(node.readyz(), Some((503, _)))).then_some(())
        },
        || format!("last /readyz: {:?}\n{}", node.readyz(), node.describe()),
    );
}

#[test]
fn a_paused_node_fences_itself_when_its_slot_is_taken() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut paused = Node::start(&etcd.endpoints(), &[]);
    paused.wait_ready(Duration::from_secs(20));
    let slot = paused.slot();
    for _ in 0..10 {
        paused.ids(1000);
    }
    // A second node wants exactly that slot: it waits while it is held.
    let args = slot_args(&slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut heir = Node::start(&etcd.endpoints(), &args);
    wait_contending(&heir);
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
    // Straight after waking, and for a while after: nothing from that slot.
    let woke = Instant::now();
    let mut refused = 0;
    while woke.elapsed() < Duration::from_secs(TTL_S + 1) {
        match paused.try_ids(100) {
            Ok(ids) => assert!(
                ids.iter().all(|id| slot_of(*id) != slot),
                "the paused node issued from {slot} after losing it\n{}",
                describe(&[&paused, &heir])
            ),
            Err(_) => refused += 1,
        }
        heir.ids(100);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        refused > 0,
        "the paused node never refused after waking\n{}",
        paused.describe()
    );
    assert_no_duplicates(&[&paused, &heir]);
}

#[test]
fn all_of_etcd_stopping_stops_the_nodes_before_the_ttl_until_it_is_back() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(&etcd.endpoints(), &[]))
        .collect();
    for node in &mut nodes {
        node.wait_ready(Duration::from_secs(20));
        node.ids(1000);
    }
    for i in 0..3 {
        signal(etcd.pid(i), "STOP");
    }
    let stopped = Instant::now();
    for node in &mut nodes {
        let left = Duration::from_secs(TTL_S).saturating_sub(stopped.elapsed());
        let description = node.describe();
        poll(
            left,
            "a node still issued a whole TTL after etcd stopped",
            || node.try_ids(10).is_err().then_some(()),
            || description.clone(),
        );
        assert!(node.ready().is_none(), "{}", node.describe());
    }
    for i in 0..3 {
        signal(etcd.pid(i), "CONT");
    }
    // They recover without a restart.
    for node in &mut nodes {
        node.wait_ready(Duration::from_secs(30));
        node.ids(1000);
    }
    let refs: Vec<&Node> = nodes.iter().collect();
    assert_no_duplicates(&refs);
}

/// A network partition: the node's path to etcd is cut while its clients
/// still reach it. It stops issuing before its lease can end, a node that
/// still reaches etcd takes its slot, and nothing the cut-off node issued
/// is issued again.
#[test]
fn a_node_cut_off_from_etcd_stops_before_the_ttl_and_its_slot_moves_on() {
    let _serial = serial();
    let etcd = Etcd::start();
    let mut proxy = Proxy::to(&etcd.members[0].client);
    let one_slot = ["--datacenter", "1", "--machine", "2"];
    let mut cut_off = Node::start(&proxy.endpoint(), &one_slot);
    cut_off.wait_ready(Duration::from_secs(20));
    let mut heir = Node::start(&etcd.endpoints(), &one_slot);
    wait_contending(&heir);
    for _ in 0..10 {
        cut_off.ids(1000);
    }
    assert!(
        proxy.accepted.load(Ordering::Relaxed) > 0,
        "cannot set up the partition: the node never connected through the proxy"
    );
    proxy.cut();
    let cut = Instant::now();
    // Its clients still reach it, and it keeps answering while its lease
    // lasts; it must refuse before the lease can end.
    let mut last_issued = cut;
    let refused_at = loop {
        match cut_off.try_ids(100) {
            Ok(_) => last_issued = Instant::now(),
            Err(why) if why.starts_with("503") => break Instant::now(),
            Err(why) => panic!("the cut-off node did not answer its client: {why}"),
        }
        assert!(
            cut.elapsed() < Duration::from_secs(TTL_S),
            "the cut-off node still issued a whole TTL after the cut\n{}",
            cut_off.describe()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        last_issued.duration_since(cut) < Duration::from_secs(TTL_S),
        "issued {:?} after the cut",
        last_issued.duration_since(cut)
    );
    let ready = heir.wait_ready(Duration::from_secs(TTL_S + 10));
    assert_eq!(ready["slot"], "datacenter=1,machine=2");
    let max_cut_off = *cut_off.issued.iter().max().unwrap();
    let since_refusal = Instant::now();
    while since_refusal.elapsed() < Duration::from_secs(1) {
        let ids = heir.ids(1000);
        assert!(
            ids.iter().all(|id| *id > max_cut_off),
            "the heir issued at or below the cut-off node's IDs\n{}",
            describe(&[&cut_off, &heir])
        );
        assert!(
            cut_off.try_ids(100).is_err(),
            "the cut-off node issued again after refusing (first refusal {:?} after the cut)\n{}",
            refused_at.duration_since(cut),
            cut_off.describe()
        );
    }
    assert_no_duplicates(&[&cut_off, &heir]);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A node run in this process, for `slot` on the twitter layout.
fn in_process_config(
    etcd: &Etcd,
    slot: &str,
    clock: Arc<snowflake::ManualClock>,
) -> snowflake_etcd::ClusterConfig {
    let fixed = slot
        .split(',')
        .map(|part| {
            let (name, value) = part.split_once('=').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect();
    snowflake_etcd::ClusterConfig {
        endpoints: etcd.endpoints().split(',').map(String::from).collect(),
        name: "test".into(),
        layout: Layout::twitter(),
        fixed,
        lease_ttl: Duration::from_secs(TTL_S),
        margin: Duration::from_millis(500),
        tolerance_ms: 5,
        reserve_ms: 1000,
        clock,
        info: snowflake_etcd::NodeInfo {
            hostname: "test".into(),
            pid: std::process::id(),
            address: "in-process".into(),
            since_ms: 0,
        },
        auth: None,
        tls: Default::default(),
    }
}

/// In process, with a clock that is an hour behind the mark the slot's last
/// holder left: the node does not issue into the past, says why, and takes
/// the slot once its clock has passed the mark.
#[test]
fn a_node_behind_the_slots_mark_does_not_issue_into_the_past() {
    let _serial = serial();
    let etcd = Etcd::start();
    let runtime = runtime();
    let now = snowflake::Clock::now_ms(&snowflake::SystemClock);
    let mark = now + 3_600_000;
    let clock = Arc::new(snowflake::ManualClock::new(now));
    let config = in_process_config(&etcd, "datacenter=0,machine=0", clock.clone());
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
    poll(
        Duration::from_secs(10),
        "the node never said it is behind the mark",
        || {
            let state = cluster.status().state;
            state.contains("behind the high-water mark").then_some(())
        },
        || format!("{:?}", cluster.status()),
    );
    assert!(cluster.current().is_err());
    // The clock catches up: the node takes the slot, above the mark.
    clock.set(mark + 1);
    let holding = poll(
        Duration::from_secs(10),
        "the node did not take the slot once its clock passed the mark",
        || cluster.current().ok(),
        || format!("{:?}", cluster.status()),
    );
    let id = runtime
        .block_on(async { tokio::task::spawn_blocking(move || holding.generator.next_id()).await })
        .unwrap()
        .unwrap();
    assert!(time_of(id.get()) > mark);
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

// ------------------------------------------------------------------- TLS

/// Runs `openssl` in `dir`, failing the test with its output if it fails.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run openssl to make the test certificates: {err}"));
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, all
/// made here with openssl and valid for two days.
fn make_certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"]);
    ca.extend(["-subj", "/CN=snowflake-test-ca"]);
    ca.extend(["-addext", "basicConstraints=critical,CA:TRUE"]);
    ca.extend(["-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
    openssl(dir, &ca);
    let uses = [
        (
            "server",
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
        ),
        (
            "client",
            "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n",
        ),
    ];
    for (who, extensions) in uses {
        std::fs::write(dir.join(format!("{who}.ext")), extensions).unwrap();
        let (key, csr, pem) = (
            format!("{who}.key"),
            format!("{who}.csr"),
            format!("{who}.pem"),
        );
        let mut req = vec!["req"];
        req.extend(ec);
        req.extend(["-keyout", &key, "-out", &csr, "-subj"]);
        let subject = format!("/CN={who}");
        req.push(&subject);
        openssl(dir, &req);
        let ext = format!("{who}.ext");
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &pem,
                "-days",
                "2",
                "-extfile",
                &ext,
            ],
        );
    }
}

/// One etcd member that speaks only TLS to clients and wants a client
/// certificate signed by the test CA; killed when dropped.
struct TlsEtcd {
    child: Child,
    endpoint: String,
}

impl TlsEtcd {
    fn start(dir: &Path) -> TlsEtcd {
        let mut failures = Vec::new();
        for attempt in 0..3 {
            let (client, peer, metrics) = (free_port(), free_port(), free_port());
            let log = dir.join(format!("etcd-{attempt}.log"));
            let mut child = Command::new("etcd")
                .current_dir(dir)
                .args([
                    "--name=tls".to_string(),
                    format!("--data-dir=data-{attempt}"),
                    format!("--listen-client-urls=https://127.0.0.1:{client}"),
                    format!("--advertise-client-urls=https://127.0.0.1:{client}"),
                    format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                    format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                    format!("--initial-cluster=tls=http://127.0.0.1:{peer}"),
                    // Health over plain HTTP, for the test to poll.
                    format!("--listen-metrics-urls=http://127.0.0.1:{metrics}"),
                    "--cert-file=server.pem".into(),
                    "--key-file=server.key".into(),
                    "--client-cert-auth".into(),
                    "--trusted-ca-file=ca.pem".into(),
                    "--logger=zap".into(),
                    "--log-level=error".into(),
                ])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let metrics = format!("127.0.0.1:{metrics}");
                if let Some((200, body)) = http(&metrics, "GET", "/health", "")
                    && body.contains("true")
                {
                    return TlsEtcd {
                        child,
                        endpoint: format!("https://127.0.0.1:{client}"),
                    };
                }
                if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    failures.push(std::fs::read_to_string(&log).unwrap_or_default());
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!(
            "etcd with TLS did not start in three tries:\n{}",
            failures.join("\n")
        );
    }
}

impl Drop for TlsEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cluster status` against `etcd` with `flags`: success, and stderr.
fn status_over_tls(
    etcd: &TlsEtcd,
    dir: &Path,
    flags: &[&str],
    env: &[(&str, &Path)],
) -> (bool, String) {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("snowflake"));
    command
        .current_dir(dir)
        .args([
            "cluster",
            "status",
            "--cluster",
            "test",
            "--etcd",
            &etcd.endpoint,
        ])
        .args(flags)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR");
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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

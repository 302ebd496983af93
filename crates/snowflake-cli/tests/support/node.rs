//! A `snowflake serve` node in cluster mode, as its clients see it: its
//! address (read from its log, so it listens on port 0 with no race), what
//! it answers, every ID it handed out, and its log. Also the `snowflake`
//! command's `cluster status`, and the checks on what nodes issued.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use snowflake::{Id, Layout};

use crate::scenario::{TTL_S, poll, scratch};
use crate::support::{Answer, exchange, http};

/// What a node logs in the scenarios: its address, its cluster state, and
/// warnings.
const LOG: &str = "warn,tower_http=off,snowflake_server::serve=info,snowflake_etcd=info";

/// A `snowflake serve` node in cluster mode; killed when dropped.
pub struct Node {
    child: Child,
    pub addr: String,
    log: PathBuf,
    /// Every ID this node handed out.
    pub issued: Vec<u64>,
}

/// What a node answered to a request for IDs.
#[derive(Debug)]
pub enum Reply {
    /// 200: the IDs (also recorded in [`Node::issued`]).
    Ids(Vec<u64>),
    /// 503: the node refuses to issue; its whole answer.
    Refused(Answer),
    /// Any other status, and the body.
    #[allow(dead_code)] // read through `Debug`, in failure messages
    Other(u16, String),
    /// No answer in time (a paused or hung node). Never a refusal: a node
    /// that hangs may yet answer with IDs.
    Silent,
}

impl Node {
    /// Starts a node that reaches etcd at `endpoints`, and waits until it
    /// listens (not until it is ready).
    pub fn start(endpoints: &str, extra: &[&str]) -> Node {
        Node::spawn(endpoints, extra, LOG)
    }

    /// As [`Node::start`], and the node logs each renewal of its lease
    /// ("fence extended"), for [`Node::renewals`].
    pub fn start_logging_renewals(endpoints: &str, extra: &[&str]) -> Node {
        Node::spawn(
            endpoints,
            extra,
            &format!("{LOG},snowflake_etcd::node=debug"),
        )
    }

    fn spawn(endpoints: &str, extra: &[&str], rust_log: &str) -> Node {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let log = scratch().join(format!(
            "node-{}.log",
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let ttl = TTL_S.to_string();
        let ttl: &[&str] = if extra.contains(&"--lease-ttl") {
            &[]
        } else {
            &["--lease-ttl", &ttl]
        };
        let child = Command::new(assert_cmd::cargo::cargo_bin("snowflake"))
            .args(["serve", "--listen", "127.0.0.1:0", "--etcd", endpoints])
            .args(["--cluster", "test"])
            .args(ttl)
            .args(extra)
            .env("RUST_LOG", rust_log)
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
                let text = node.log();
                let rest = text.split("listening on http://").nth(1)?;
                Some(rest.split('/').next()?.to_string())
            },
            || node.describe(),
        );
        node
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the node logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The node's address and log, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "--- node {} (pid {}), log {}:\n{}",
            self.addr,
            self.child.id(),
            self.log.display(),
            self.log()
        )
    }

    /// `/readyz`: the status and the body.
    pub fn readyz(&self) -> Option<(u16, String)> {
        http(&self.addr, "GET", "/readyz", "")
    }

    /// The `/readyz` body when it says ready.
    pub fn ready(&self) -> Option<Value> {
        match self.readyz()? {
            (200, body) => serde_json::from_str(&body).ok(),
            _ => None,
        }
    }

    pub fn wait_ready(&self, within: Duration) -> Value {
        poll(
            within,
            &format!("node {} not ready", self.addr),
            || self.ready(),
            || format!("last /readyz: {:?}\n{}", self.readyz(), self.describe()),
        )
    }

    /// Waits until the node says, in its log, that every slot it may take
    /// is held, while `/readyz` answers 503: it is contending, not merely
    /// not started. (The 503 body is the same for every reason; the reason
    /// goes to the log.)
    pub fn wait_contending(&self) {
        poll(
            Duration::from_secs(20),
            "the node never said the slot is taken",
            || {
                let contending = self.log().contains("slots are taken");
                (contending && matches!(self.readyz(), Some((503, _)))).then_some(())
            },
            || format!("last /readyz: {:?}\n{}", self.readyz(), self.describe()),
        );
    }

    /// The slot it holds, once ready.
    pub fn slot(&self) -> String {
        self.wait_ready(Duration::from_secs(5))["slot"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Asks for `count` IDs; records the IDs it hands out.
    pub fn ask(&mut self, count: u32) -> Reply {
        let path = format!("/api/v1/ids?count={count}");
        match exchange(&self.addr, "POST", &path, "") {
            Some(answer) if answer.status == 200 => {
                let v: Value = serde_json::from_str(&answer.body).unwrap();
                let ids: Vec<u64> = v["ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|id| id.as_str().unwrap().parse().unwrap())
                    .collect();
                self.issued.extend(&ids);
                Reply::Ids(ids)
            }
            Some(answer) if answer.status == 503 => Reply::Refused(answer),
            Some(answer) => Reply::Other(answer.status, answer.body),
            None => Reply::Silent,
        }
    }

    /// Asks for `count` IDs, which must be given.
    pub fn ids(&mut self, count: u32) -> Vec<u64> {
        match self.ask(count) {
            Reply::Ids(ids) => ids,
            other => panic!(
                "node {} refused IDs: {other:?}\n{}",
                self.addr,
                self.describe()
            ),
        }
    }

    /// Waits for the process to end by itself; its exit status.
    pub fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("node did not exit within {within:?}\n{}", self.describe());
    }

    /// Watches the log of a node started with
    /// [`Node::start_logging_renewals`] and notes when each renewal line
    /// appears: each is at or after the answer to that renewal arrived.
    pub fn renewals(&self) -> Renewals {
        let seen: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (log, noted, stopped) = (self.log.clone(), seen.clone(), stop.clone());
        let tail = std::thread::spawn(move || {
            let mut count = 0;
            while !stopped.load(Ordering::Acquire) {
                let lines = std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .matches("fence extended")
                    .count();
                // Read after the file: the line was written before this.
                let read = Instant::now();
                if lines > count {
                    noted.lock().unwrap().push(read);
                    count = lines;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Renewals {
            seen,
            stop,
            tail: Some(tail),
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Kept after a failure: the panic message names it.
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// When a node's renewals were seen in its log, on the test's clock.
pub struct Renewals {
    seen: Arc<Mutex<Vec<Instant>>>,
    stop: Arc<AtomicBool>,
    tail: Option<std::thread::JoinHandle<()>>,
}

impl Renewals {
    /// When the last renewal line was seen: it was written before this, and
    /// after the renewal's answer arrived.
    pub fn last(&self) -> Option<Instant> {
        self.seen.lock().unwrap().last().copied()
    }

    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl Drop for Renewals {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(tail) = self.tail.take() {
            let _ = tail.join();
        }
    }
}

/// Every node's log, for failure messages.
pub fn describe(nodes: &[&Node]) -> String {
    nodes
        .iter()
        .map(|n| n.describe())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The slot of an ID of the twitter layout, as the nodes name it.
pub fn slot_of(id: u64) -> String {
    let twitter = Layout::twitter();
    let d = twitter.decode(Id::new(id)).unwrap();
    format!(
        "datacenter={},machine={}",
        d.field("datacenter").unwrap(),
        d.field("machine").unwrap()
    )
}

/// The time of an ID of the twitter layout, Unix ms.
pub fn time_of(id: u64) -> i64 {
    Layout::twitter()
        .decode(Id::new(id))
        .unwrap()
        .timestamp_ms()
}

/// `serve` flags that fix a node to `slot` (`datacenter=1,machine=2`).
pub fn slot_args(slot: &str) -> Vec<String> {
    let mut args = Vec::new();
    for part in slot.split(',') {
        let (name, value) = part.split_once('=').unwrap();
        args.push(format!("--{name}"));
        args.push(value.to_string());
    }
    args
}

/// A slot handed on above the IDs issued in it: every ID `heir` issued is
/// `above` the floor (named `floor` in the failure), and no ID of `before`
/// and `heir` repeats.
pub fn assert_handed_on_above(
    before: &Node,
    heir: &Node,
    floor: &str,
    above: impl Fn(u64) -> bool,
) {
    assert!(
        heir.issued.iter().all(|id| above(*id)),
        "the heir issued at or below {floor}\n{}",
        describe(&[before, heir])
    );
    assert_no_duplicates(&[before, heir]);
}

/// Sorts everything every node issued and fails on any repeat; how many
/// IDs there were.
pub fn assert_no_duplicates(nodes: &[&Node]) -> usize {
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

/// The command `snowflake cluster status` of cluster `test` at `endpoints`.
pub fn status_command(endpoints: &str) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("snowflake"));
    command.args([
        "cluster",
        "status",
        "--cluster",
        "test",
        "--etcd",
        endpoints,
    ]);
    command
}

/// `snowflake cluster status` of cluster `test` at `endpoints`, with
/// `flags`: its stdout, which must come with exit status 0.
pub fn cluster_status(endpoints: &str, flags: &[&str]) -> String {
    let out = status_command(endpoints).args(flags).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `cluster status --json`, parsed.
pub fn cluster_status_json(endpoints: &str) -> Vec<Value> {
    let out = cluster_status(endpoints, &["--json"]);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

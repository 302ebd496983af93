//! What every cluster scenario shares: one scenario at a time, a scratch
//! directory, polling with deadlines, signals, and a scenario's setup and
//! teardown (an etcd cluster, removed with everything in it when the
//! scenario ends, however it ends).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::etcd::Etcd;
use crate::node::{Node, slot_args};

/// The lease TTL of the nodes, unless a scenario says otherwise: short,
/// so the suite is quick.
pub const TTL_S: u64 = 2;

/// A scenario's etcd cluster; only one scenario runs at a time (each starts
/// its own etcd and nodes, and timing matters on a two-core machine).
pub struct Scene {
    pub etcd: Etcd,
    // Dropped last: the next scenario starts once this one's etcd is gone.
    _serial: MutexGuard<'static, ()>,
}

impl Scene {
    /// Waits for the scenarios before, then starts a three-member etcd.
    pub fn start() -> Scene {
        let serial = serial();
        Scene {
            etcd: Etcd::start(),
            _serial: serial,
        }
    }

    /// A `snowflake serve` node on this scene's etcd, listening (not yet
    /// ready); `extra` are more flags for `serve`.
    pub fn node(&self, extra: &[&str]) -> Node {
        Node::start(&self.etcd.endpoints(), extra)
    }

    /// A node that holds a slot (any) and has issued `ids` IDs in it, a
    /// thousand a request at most, and that slot: what a slot handed on
    /// must go above.
    pub fn holder(&self, ids: u32) -> (Node, String) {
        let mut node = self.node(&[]);
        node.wait_ready(Duration::from_secs(20));
        let slot = node.slot();
        let mut left = ids;
        while left > 0 {
            let count = left.min(1000);
            node.ids(count);
            left -= count;
        }
        (node, slot)
    }

    /// A second node that wants exactly `slot`: it waits, contending, while
    /// another holds it.
    pub fn heir_of(&self, slot: &str) -> Node {
        let args = slot_args(slot);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let heir = self.node(&args);
        heir.wait_contending();
        heir
    }
}

/// Holds off every other scenario while it lives; for the scenarios that
/// need no etcd of a scene (the TLS one starts its own).
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `sig` (`KILL`, `TERM`, `STOP`, `CONT`) to process `pid`.
pub fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
}

/// A directory of this test process for etcd data and node logs.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!(
            "snowflake-cluster-{}-{}",
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// A name part no other run on this machine uses at the same time.
pub fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Polls `check` until it gives a value; panics with `what` and whatever
/// `context` says at the deadline.
pub fn poll<T>(
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
        std::thread::sleep(Duration::from_millis(20));
    }
}

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
//!   stops every node until it is back; losing the etcd leader, or a
//!   listed member that is gone, stops none;
//! - what only an operator can mend: a damaged mark keeps its slot unused,
//!   and the node takes it once the mark is mended, without a restart;
//! - reaching etcd: mutual TLS, and a password refused over plain http;
//! - clock skew between nodes (`cluster/clock_skew.rs`): measured within
//!   its stated bound of a known shift, and of a clock stepped while the
//!   nodes run; shown and warned of, never stopping a node; clock keys
//!   forged in etcd neither referees nor measured nor reported.
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

// The scenarios, one room a concern.
// distinct slots, `cluster status`, a slot key a node never heard it took
#[path = "cluster/slots.rs"]
mod slots;
// a slot handed on above its IDs: kill, clean stop, key deleted, clock behind
#[path = "cluster/handover.rs"]
mod handover;
// cut off, paused, all of etcd stopped, the leader lost
#[path = "cluster/fence.rs"]
mod fence;
// a damaged mark: kept unused, a 503 without Retry-After
#[path = "cluster/operator.rs"]
mod operator;
// mutual TLS, a password over plain http
#[path = "cluster/reaching.rs"]
mod reaching;
// clocks measured against each other, warned of beyond the bound
#[path = "cluster/clock_skew.rs"]
mod clock_skew;
// 64 nodes in the test command; the 1,024-node measurement
#[path = "cluster/many.rs"]
mod many;

// The harness.
#[path = "support/etcd.rs"]
mod etcd;
#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/in_process.rs"]
mod in_process;
#[path = "support/load.rs"]
mod load;
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
    Node, Reply, assert_handed_on_above, assert_no_duplicates, cluster_status, cluster_status_json,
    describe, slot_args, slot_of, time_of,
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

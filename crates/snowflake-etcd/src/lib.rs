//! Cluster mode: every node leases its own worker slot on etcd, fences itself
//! when it cannot renew the lease, and keeps its generator's high-water mark
//! in etcd so that the next holder of its slot never issues an ID at or
//! below one it issued.
//!
//! Keys, under `/snowflake/{cluster}/`:
//! - `slots/{slot}`: who holds the slot (JSON), attached to the holder's
//!   lease, so it disappears when the holder stops renewing;
//! - `marks/{slot}`: the highest Unix millisecond the slot's holder may issue
//!   up to, written before any ID in that window is issued, only while the
//!   writer still holds the slot (a transaction compares the slot's lease),
//!   and kept after the lease ends so the next holder can read it. A clean
//!   shutdown lowers it to the last ID issued, after the node stopped
//!   issuing and before it revokes the lease, so the next holder need not
//!   wait out the window kept ahead of the clock;
//! - `clocks/{lease}`: the node's clock reading, put at each renewal,
//!   attached to its lease (see `skew`);
//! - `probe`: put by `cluster status` to ask every node for its clock now.
//!
//! A node whose slot key vanishes, or is overwritten, while it holds the
//! slot (a clean-up script, a restore) gives the slot up at once and claims
//! one again; it could not have raised the mark meanwhile.
//!
//! Three things make a duplicate impossible, each on its own:
//! 1. slots are claimed with a create-if-absent transaction, so two live
//!    nodes never hold one slot;
//! 2. a node stops issuing at `TTL - margin` after its last renewal was sent,
//!    measured on its monotonic clock, before etcd can give the slot away;
//! 3. a new holder waits until its clock is past the slot's mark, and a
//!    fenced node cannot raise the mark, so it cannot issue above it.
//!
//! Beside the slots, each node publishes its clock with its renewals, under
//! `clocks/{lease}`, and estimates how far the other nodes' clocks are from
//! its own (`skew` says how, and what it assumes): IDs from nodes whose
//! clocks disagree do not sort by time. It warns; it never stops issuing
//! for it.
//!
//! Modules: `node` runs the session (lease, claim, renewals) and answers the
//! server; `fence` is the deadline; `claim` takes a slot and starts its
//! generator; `watch` notices a held slot's key vanishing; `txn` holds the
//! compare-then-write transactions; `mark` is the generator's mark store on
//! etcd; `members` chooses the etcd member each call goes to, avoiding one
//! that just failed; `slots` enumerates the slots; `holders` reads them for
//! `cluster status`; `skew` is the arithmetic of clock offsets, and
//! `clocks` publishes, watches and probes for it.
#![warn(missing_docs)]

mod claim;
mod clocks;
mod config;
mod error;
mod fence;
mod holding;
mod mark;
mod members;
mod node;
mod roster;
mod skew;
mod slots;
mod txn;
mod watch;

pub use clocks::{PROBE_WAIT, probe_clocks};
pub use config::{ClusterConfig, NodeInfo, TlsConfig, connect};
pub use error::Error;
pub use holding::Holding;
pub use node::{Cluster, ClusterStatus, NotReady};
pub use roster::{Holder, SlotHolder, holders};
pub use skew::{ClockSkew, Offset, Peer};
pub use slots::{Slot, SlotSpace, slot_space};

//! Claiming a free slot and starting its generator above the slot's mark.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use etcd_client::{Client, GetOptions};
use snowflake::{ErrorKind, Generator};

use crate::config::ClusterConfig;
use crate::error::Error;
use crate::fence::Fence;
use crate::holding::Holding;
use crate::mark::{EtcdMarkStore, MarkWriter};
use crate::slots::slot_space;
use crate::txn::{create_slot, release_slot};

/// Tries the free slots, from a starting point that differs per node (see
/// [`first_try`]); the create-if-absent transaction settles the races that
/// remain. The generator's mark store refuses to write once `fence` is
/// closed.
pub(crate) async fn claim(
    config: &ClusterConfig,
    client: &mut Client,
    lease: i64,
    fence: &Arc<Fence>,
    runtime: &tokio::runtime::Handle,
) -> Result<Option<Holding>, Error> {
    let space = slot_space(&config.layout, &config.fixed).map_err(Error::Generator)?;
    let prefix = format!("{}slots/", config.prefix());
    let listed = client
        .get(
            prefix.as_str(),
            Some(GetOptions::new().with_prefix().with_keys_only()),
        )
        .await
        .map_err(Error::ListSlots)?;
    let mut taken = HashSet::new();
    for kv in listed.kvs() {
        let key = String::from_utf8_lossy(kv.key()).into_owned();
        if kv.lease() == lease {
            // This node holds no slot, yet a slot key is under its lease: a
            // create that etcd made but whose answer never came back (it
            // timed out). Left alone, this node's own renewals would keep
            // the slot from every node for as long as it lives. It never
            // issued from it (no generator was built), so it is let go.
            tracing::warn!(key, "releasing a slot this node took without hearing so");
            if release_slot(client, &key, lease).await {
                continue;
            }
        }
        taken.insert(key);
    }
    let start = first_try(lease, space.len());
    let mut info = config.info.clone();
    info.since_ms = config.clock.now_ms();
    let limit = space.len().min(taken.len() as u128 + 256);
    // Why the last free slot was passed over; and whether waiting may
    // help: not if every slot was tried and each had a damaged mark.
    let mut passed_over = None;
    let mut waiting_may_help = limit < space.len();
    for i in 0..limit {
        let slot = space.get((start + i) % space.len());
        let key = config.slot_key(&slot);
        if taken.contains(&key) {
            waiting_may_help = true;
            continue;
        }
        if !create_slot(client, &key, &info, lease)
            .await
            .map_err(Error::Claim)?
        {
            waiting_may_help = true;
            continue;
        }
        let writer = Arc::new(MarkWriter::new(
            client.clone(),
            config.endpoints.len(),
            key.clone(),
            config.mark_key(&slot),
            lease,
        ));
        let unreadable = Arc::new(AtomicBool::new(false));
        let store = EtcdMarkStore {
            writer: Arc::clone(&writer),
            fence: Arc::clone(fence),
            runtime: runtime.clone(),
            layout: config.layout.clone(),
            unreadable: Arc::clone(&unreadable),
        };
        let node = slot.0.clone();
        let layout = config.layout.clone();
        let clock = Arc::clone(&config.clock);
        let (tolerance, reserve) = (config.tolerance_ms, config.reserve_ms);
        // Reading the mark (and waiting for the clock to pass it) blocks.
        let built = tokio::task::spawn_blocking(move || {
            let pairs: Vec<(&str, u64)> = node.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            Generator::builder(layout)
                .node(&pairs)
                .clock(clock)
                .tolerance_ms(tolerance)
                .reserve_ms(reserve)
                .store(store)
                .build()
        })
        .await
        .map_err(|_| Error::Interrupted)?;
        match built {
            Ok(generator) => return Ok(Some(Holding::new(slot, generator, lease, writer))),
            Err(reason) if reason.kind() == ErrorKind::Store => {
                // Most often: this node's clock is behind the mark the
                // slot's last holder left. Never issue into the past.
                release_slot(client, &key, lease).await;
                let damaged = unreadable.load(Ordering::Acquire);
                waiting_may_help |= !damaged;
                let why = if damaged {
                    Error::DamagedMark { slot, reason }
                } else {
                    Error::SlotPassedOver { slot, reason }
                };
                tracing::warn!("{why}");
                passed_over = Some(why);
            }
            Err(err) => {
                release_slot(client, &key, lease).await;
                return Err(Error::Generator(err));
            }
        }
    }
    // Say why the free slots were passed over, rather than "all taken";
    // a damaged mark only when nothing else might change with time.
    match passed_over {
        Some(Error::DamagedMark { slot, reason }) if waiting_may_help => {
            Err(Error::SlotPassedOver { slot, reason })
        }
        Some(why) => Err(why),
        None => Ok(None),
    }
}

/// The index of the first slot a node holding `lease` tries, of `len`.
///
/// Taken from the lease, which etcd never gives two nodes, rather than from
/// the process ID and the time: nodes in one process, or in containers
/// that all run as PID 1, starting in the same millisecond would otherwise
/// all start at one slot, and every node but one would lose a transaction
/// (a raft write) for each node ahead of it. etcd numbers the leases one
/// member grants one after another, and multiplying by an odd number maps
/// consecutive numbers to distinct slots that lie apart.
fn first_try(lease: i64, len: u128) -> u128 {
    u128::from((lease as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) % len.max(1)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn consecutive_leases_start_at_distinct_slots_apart() {
        // Lease numbers as one etcd member hands them out.
        let base = 0x694d_8a9c_1f2e_3a00_i64;
        let starts: Vec<u128> = (0..1024).map(|i| first_try(base + i, 1024)).collect();
        assert_eq!(starts.iter().collect::<HashSet<_>>().len(), 1024);
        let neighbours = starts
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) < 8)
            .count();
        assert_eq!(neighbours, 0, "consecutive leases start next to each other");
        assert_eq!(first_try(7, 0), 0);
        assert!(first_try(-1, 3) < 3);
    }
}

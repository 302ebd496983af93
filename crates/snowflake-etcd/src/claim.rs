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

/// Tries the free slots, from a starting point that differs per node so
/// that nodes starting together rarely race for the same one; the
/// create-if-absent transaction settles the races that remain. The
/// generator's mark store refuses to write once `fence` is closed.
pub(crate) async fn claim(
    config: &ClusterConfig,
    client: &mut Client,
    lease: i64,
    fence: &Arc<Fence>,
    runtime: &tokio::runtime::Handle,
) -> Result<Option<Holding>, Error> {
    let space = slot_space(&config.layout, &config.fixed).map_err(Error::Generator)?;
    let prefix = format!("{}slots/", config.prefix());
    let taken: HashSet<String> = client
        .get(
            prefix.as_str(),
            Some(GetOptions::new().with_prefix().with_keys_only()),
        )
        .await
        .map_err(Error::ListSlots)?
        .kvs()
        .iter()
        .map(|kv| String::from_utf8_lossy(kv.key()).into_owned())
        .collect();
    let start = {
        let seed = u128::from(std::process::id())
            ^ (config.clock.now_ms() as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        seed % space.len().max(1)
    };
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

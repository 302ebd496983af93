//! The slots a node can claim: every combination of the layout's node
//! fields, less those the user fixed.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use etcd_client::{Client, GetOptions};
use snowflake::{Error, ErrorKind, Generator, Layout};

use std::sync::atomic::AtomicI64;

use crate::mark::{EtcdMarkStore, MarkWriter};
use crate::{Holding, Inner, create_slot, release_slot};

/// One combination of node-field values, e.g. `datacenter=1,machine=7`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Slot(pub Vec<(String, u64)>);

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

/// The slots a node of `layout` may claim with `fixed` field values.
#[derive(Debug, Clone)]
pub struct SlotSpace {
    fixed: Vec<(String, u64)>,
    free: Vec<(String, u64)>,
    order: Vec<String>,
    len: u128,
}

impl SlotSpace {
    /// How many slots there are.
    pub fn len(&self) -> u128 {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `index`-th slot, counting the free fields as a mixed-radix number.
    pub fn get(&self, mut index: u128) -> Slot {
        let mut values = self.fixed.clone();
        for (name, size) in self.free.iter().rev() {
            let size = u128::from(*size);
            values.push((name.clone(), (index % size) as u64));
            index /= size;
        }
        values.sort_by_key(|(name, _)| self.order.iter().position(|n| n == name));
        Slot(values)
    }
}

/// Every slot of the layout's node fields, with `fixed` ones held to their
/// values (checked against the layout).
pub fn slot_space(layout: &Layout, fixed: &[(String, u64)]) -> Result<SlotSpace, Error> {
    let pairs: Vec<(&str, u64)> = fixed.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    if let Some(seq) = layout.sequence()
        && pairs.iter().any(|(n, _)| *n == seq.name())
    {
        return Err(Error::invalid_value(
            "sequence",
            seq.name(),
            "the sequence is the generator's; fix only node fields",
        ));
    }
    layout.compose(layout.epoch_ms(), &pairs)?;
    let mut free = Vec::new();
    let mut len: u128 = 1;
    for field in layout.node_fields() {
        if !fixed.iter().any(|(n, _)| n == field.name()) {
            free.push((field.name().to_string(), field.max() + 1));
            len = len.saturating_mul(u128::from(field.max()) + 1);
        }
    }
    Ok(SlotSpace {
        fixed: fixed.to_vec(),
        free,
        order: layout.node_fields().map(|f| f.name().to_string()).collect(),
        len,
    })
}

/// Tries the free slots, from a starting point that differs per node so
/// that nodes starting together rarely race for the same one; the
/// create-if-absent transaction settles the races that remain.
pub(crate) async fn claim(
    inner: &Arc<Inner>,
    client: &mut Client,
    lease: i64,
) -> Result<Option<Holding>, String> {
    let config = &inner.config;
    let space = slot_space(&config.layout, &config.fixed).map_err(|e| e.to_string())?;
    let prefix = format!("{}slots/", config.prefix());
    let taken: HashSet<String> = client
        .get(
            prefix.as_str(),
            Some(GetOptions::new().with_prefix().with_keys_only()),
        )
        .await
        .map_err(|err| format!("cannot list slots: {err}"))?
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
    let mut skipped = None;
    for i in 0..limit {
        let slot = space.get((start + i) % space.len());
        let key = format!("{prefix}{slot}");
        if taken.contains(&key) {
            continue;
        }
        match create_slot(client, &key, &info, lease).await {
            Ok(true) => {}
            Ok(false) => continue,
            Err(err) => return Err(format!("cannot claim a slot: {err}")),
        }
        let writer = Arc::new(MarkWriter {
            client: client.clone(),
            slot_key: key.clone(),
            mark_key: format!("{}marks/{slot}", config.prefix()),
            lease,
            durable: AtomicI64::new(0),
            writing: tokio::sync::Mutex::new(()),
        });
        let store = EtcdMarkStore {
            writer: Arc::clone(&writer),
            inner: Arc::downgrade(inner),
            runtime: inner.runtime.clone(),
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
        .map_err(|err| format!("the generator's start failed: {err}"))?;
        match built {
            Ok(generator) => {
                return Ok(Some(Holding {
                    slot,
                    generator: Arc::new(generator),
                    lease,
                    writer,
                }));
            }
            Err(err) if err.kind() == ErrorKind::Store => {
                // Most often: this node's clock is behind the mark the
                // slot's last holder left. Never issue into the past.
                tracing::warn!(%slot, "not taking slot {slot}: {err}");
                release_slot(client, &key, lease).await;
                skipped = Some(format!("not taking slot {slot}: {err}"));
            }
            Err(err) => {
                release_slot(client, &key, lease).await;
                return Err(err.to_string());
            }
        }
    }
    // Say why the free slots were passed over, rather than "all taken".
    match skipped {
        Some(why) => Err(why),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twitter_has_1024_slots_and_fixing_a_datacenter_leaves_32() {
        let twitter = Layout::twitter();
        let all = slot_space(&twitter, &[]).unwrap();
        assert_eq!(all.len(), 1024);
        let mut seen = HashSet::new();
        for i in 0..all.len() {
            assert!(seen.insert(all.get(i).to_string()));
        }
        assert_eq!(all.get(0).to_string(), "datacenter=0,machine=0");
        let one = slot_space(&twitter, &[("datacenter".into(), 3)]).unwrap();
        assert_eq!(one.len(), 32);
        assert_eq!(one.get(5).to_string(), "datacenter=3,machine=5");
        assert!(slot_space(&twitter, &[("datacenter".into(), 32)]).is_err());
        assert!(slot_space(&twitter, &[("sequence".into(), 1)]).is_err());
    }
}

//! A slot held under a lease, and the generator issuing in it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use snowflake::SharedGenerator;

use crate::config::ClusterConfig;
use crate::mark::MarkWriter;
use crate::slots::Slot;

/// A slot held under a lease, and the generator for it.
#[derive(Debug)]
pub struct Holding {
    /// The slot.
    pub slot: Slot,
    /// The generator issuing in it.
    pub generator: Arc<SharedGenerator>,
    lease: i64,
    writer: Arc<MarkWriter>,
}

impl Holding {
    pub(crate) fn new(
        slot: Slot,
        generator: SharedGenerator,
        lease: i64,
        writer: Arc<MarkWriter>,
    ) -> Holding {
        Holding {
            slot,
            generator: Arc::new(generator),
            lease,
            writer,
        }
    }

    /// The lease the slot is held under.
    pub(crate) fn lease(&self) -> i64 {
        self.lease
    }

    /// Keeps the slot's mark ahead of the clock by the reserve plus the TTL,
    /// topped up at each renewal, off the request path. The generator then
    /// finds its own reservations already durable and never blocks a request
    /// on etcd, not even while etcd elects a new leader; and a node that takes
    /// the slot after the lease expired finds the mark at most the reserve
    /// ahead of its clock.
    pub(crate) async fn keep_mark_ahead(&self, config: &ClusterConfig) {
        let now = config.clock.now_ms();
        let ttl = config.lease_ttl.as_millis() as i64;
        let ahead = config.reserve_ms as i64 + ttl;
        let durable = self.writer.durable.load(Ordering::Acquire);
        if durable - now >= ahead - ttl / 5 {
            return;
        }
        // Never below what the generator itself reserved.
        let floor = self.generator.stats().mark_ms.unwrap_or(0);
        if let Err(err) = self.writer.write((now + ahead).max(floor)).await {
            tracing::warn!(slot = %self.slot, "cannot move the mark ahead: {err}");
        }
    }

    /// Lowers the slot's mark to this node's last issued time, so that the
    /// next holder does not wait out the reserve, and stops all further mark
    /// writes. Call it only once no ID from this holding can be handed out
    /// any more (the node has fenced itself), and before the lease ends.
    /// Returns the mark written.
    pub(crate) async fn lower_mark_to_last_issued(&self) -> Result<i64, snowflake::Error> {
        // An ID made now is above every ID handed out before the fence (the
        // generator's compare-and-swap orders them), and is itself never
        // handed out: its time is the least mark that still covers them all.
        let generator = Arc::clone(&self.generator);
        let probe = tokio::task::spawn_blocking(move || generator.next_id())
            .await
            .map_err(|_| snowflake::Error::store_failure("the last ID could not be read"))??;
        let last_ms = self.generator.layout().decode(probe)?.timestamp_ms();
        self.writer.lower_and_close(last_ms).await?;
        Ok(last_ms)
    }
}

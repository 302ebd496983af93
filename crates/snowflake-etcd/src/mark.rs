//! The generator's high-water mark, kept in etcd under the slot.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use etcd_client::Client;
use snowflake::{Error, Layout, MarkStore};

use crate::fence::Fence;
use crate::members::past_refusals;
use crate::txn::put_mark;

/// How long one etcd call for the mark may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

pub(crate) struct EtcdMarkStore {
    pub(crate) writer: Arc<MarkWriter>,
    pub(crate) fence: Arc<Fence>,
    pub(crate) runtime: tokio::runtime::Handle,
    /// The layout whose times the mark must be.
    pub(crate) layout: Layout,
    /// Set when the stored mark is not a time of the layout: damage that
    /// waiting does not mend, so the claim says an operator must act.
    pub(crate) unreadable: Arc<AtomicBool>,
}

/// A stored mark read as a time of `layout`: Unix milliseconds in decimal,
/// within the layout's time range; otherwise what it is instead. Anything
/// else is damage (a hand edit, a restore from elsewhere) that only an
/// operator can mend, and is never taken for "no mark", which would let
/// the next holder issue IDs that were issued before.
pub(crate) fn read_mark(value: &[u8], layout: &Layout) -> Result<i64, String> {
    let shown = || {
        let cut = &value[..value.len().min(40)];
        let more = if cut.len() < value.len() { "…" } else { "" };
        format!("{:?}{more}", String::from_utf8_lossy(cut))
    };
    let ms: i64 = std::str::from_utf8(value)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{}, not a time in Unix milliseconds", shown()))?;
    match layout.time_units(ms) {
        Ok(_) => Ok(ms),
        Err(_) => Err(format!(
            "{ms}, outside the time range of layout {}",
            layout.name()
        )),
    }
}

/// Writes a slot's mark, fenced by the slot's lease. The session keeps the
/// mark ahead of the clock in the background, so that the generator's own
/// writes, which would block a request on a round trip to etcd, are rare.
pub(crate) struct MarkWriter {
    client: Client,
    slot_key: String,
    mark_key: String,
    lease: i64,
    /// The highest mark known to be stored; 0 before the first write.
    pub(crate) durable: AtomicI64,
    /// Writes go one at a time, each only above the last: two writers (the
    /// session topping up, a request reserving) whose puts reached etcd in
    /// the other order would otherwise leave the lower mark stored.
    writing: tokio::sync::Mutex<()>,
    /// Set by the last write of a clean shutdown: a top-up still queued
    /// behind it must not raise the mark again.
    closed: AtomicBool,
    /// How many etcd members the client goes round.
    members: usize,
}

impl std::fmt::Debug for MarkWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkWriter")
            .field("mark_key", &self.mark_key)
            .field("durable", &self.durable)
            .finish_non_exhaustive()
    }
}

/// One etcd call for the mark, bounded by [`CALL_TIMEOUT`], with etcd's
/// errors worded as the store's.
async fn within_time<T>(
    call: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, Error> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(result) => result.map_err(|err| Error::store_failure(format!("etcd: {err}"))),
        Err(_) => Err(Error::store_failure("etcd did not answer in time")),
    }
}

impl MarkWriter {
    /// The writer of the mark at `mark_key` for the slot at `slot_key`,
    /// held under `lease`, through `client`, which goes round `members`
    /// etcd members; nothing written yet.
    pub(crate) fn new(
        client: Client,
        members: usize,
        slot_key: String,
        mark_key: String,
        lease: i64,
    ) -> Self {
        MarkWriter {
            client,
            slot_key,
            mark_key,
            lease,
            durable: AtomicI64::new(0),
            writing: tokio::sync::Mutex::new(()),
            closed: AtomicBool::new(false),
            members: members.max(1),
        }
    }

    /// Stores `mark_ms` if this node's lease still holds the slot. Waiting
    /// for another write and the call itself share one time limit.
    pub(crate) async fn write(&self, mark_ms: i64) -> Result<(), Error> {
        within_time(async {
            let _one_at_a_time = self.writing.lock().await;
            if self.closed.load(Ordering::Acquire) {
                return Ok(false);
            }
            if mark_ms <= self.durable.load(Ordering::Acquire) {
                return Ok(true);
            }
            let succeeded = self.put(mark_ms).await?;
            if succeeded {
                self.durable.fetch_max(mark_ms, Ordering::AcqRel);
            }
            Ok(succeeded)
        })
        .await?
        .then_some(())
        .ok_or_else(|| Error::store_failure("the slot is no longer held by this node's lease"))
    }

    /// The last write of a clean shutdown: stores `mark_ms` even below the
    /// marks stored before, if this node's lease still holds the slot, and
    /// refuses every write after it. The caller must have stopped issuing
    /// and must pass a time at or above every ID it handed out.
    pub(crate) async fn lower_and_close(&self, mark_ms: i64) -> Result<(), Error> {
        within_time(async {
            let _one_at_a_time = self.writing.lock().await;
            self.closed.store(true, Ordering::Release);
            // What is stored from now on is at most this: nothing above it
            // counts as covered any more.
            self.durable.fetch_min(mark_ms, Ordering::AcqRel);
            self.put(mark_ms).await
        })
        .await?
        .then_some(())
        .ok_or_else(|| Error::store_failure("the slot is no longer held by this node's lease"))
    }

    /// Puts the mark, fenced by the slot's lease; whether the lease still
    /// held the slot. A member that is gone costs no write (see `members`).
    async fn put(&self, mark_ms: i64) -> Result<bool, etcd_client::Error> {
        past_refusals(self.members, || {
            let mut client = self.client.clone();
            async move {
                put_mark(
                    &mut client,
                    &self.slot_key,
                    &self.mark_key,
                    self.lease,
                    mark_ms,
                )
                .await
            }
        })
        .await
    }
}

impl EtcdMarkStore {
    /// Runs an etcd call from the generator's synchronous code: on a worker
    /// of a multi-threaded runtime it steps aside with `block_in_place`; on
    /// any other thread it blocks on the runtime it was made on.
    fn block<T>(&self, call: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        match tokio::runtime::Handle::try_current() {
            Ok(current)
                if current.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread =>
            {
                Err(Error::store_failure(
                    "the mark cannot be written from a current-thread runtime",
                ))
            }
            Ok(_) => tokio::task::block_in_place(|| self.runtime.block_on(call)),
            Err(_) => self.runtime.block_on(call),
        }
    }
}

impl MarkStore for EtcdMarkStore {
    fn load(&self) -> Result<Option<i64>, Error> {
        let mut client = self.writer.client.clone();
        let key = self.writer.mark_key.clone();
        let resp = self.block(within_time(async move { client.get(key, None).await }))?;
        let Some(kv) = resp.kvs().first() else {
            return Ok(None);
        };
        read_mark(kv.value(), &self.layout)
            .map(Some)
            .map_err(|what| {
                self.unreadable.store(true, Ordering::Release);
                Error::store_failure(format!(
                    "the mark {} in etcd is {what}",
                    self.writer.mark_key
                ))
            })
    }

    /// Writes the mark only while this node's lease still holds the slot,
    /// and only before the node's own deadline: a fenced node cannot raise it.
    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        // Already covered by a write the session made ahead of time. Checked
        // before the fence, as it raises nothing: the generator reserves in
        // its own steps and does not see the session's top-ups, and the last
        // ID read after the fence on a clean shutdown must not fail for it.
        if mark_ms <= self.writer.durable.load(Ordering::Acquire) {
            return Ok(());
        }
        if self.fence.closed() {
            return Err(Error::store_failure(
                "fenced: the slot's lease may have ended",
            ));
        }
        self.block(self.writer.write(mark_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_a_time_of_the_layout_and_nothing_else() {
        let twitter = Layout::twitter();
        let ms = twitter.epoch_ms() + 1_000;
        assert_eq!(read_mark(ms.to_string().as_bytes(), &twitter), Ok(ms));
        assert_eq!(read_mark(format!(" {ms}\n").as_bytes(), &twitter), Ok(ms));
        for damaged in ["", "garbage", "1.7e12", "-5", "0", "99999999999999999999"] {
            let why = read_mark(damaged.as_bytes(), &twitter).unwrap_err();
            assert!(
                why.contains("not a time in Unix milliseconds") || why.contains("outside"),
                "{damaged:?}: {why}"
            );
        }
        // Before the layout's epoch, or past its end: damaged, not absent.
        let before = (twitter.epoch_ms() - 1).to_string();
        assert!(
            read_mark(before.as_bytes(), &twitter)
                .unwrap_err()
                .contains("twitter")
        );
    }

    #[test]
    fn what_a_damaged_mark_holds_is_shown_escaped_and_cut() {
        let why = read_mark(b"\x1b[31mred\nline", &Layout::twitter()).unwrap_err();
        assert!(!why.contains('\x1b') && !why.contains('\n'), "{why}");
        let long = vec![b'x'; 10_000];
        let why = read_mark(&long, &Layout::twitter()).unwrap_err();
        assert!(why.len() < 120 && why.contains('…'), "{why}");
    }
}

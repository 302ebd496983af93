//! Watching a held slot's key, so that a node whose key vanished (a clean-up
//! script, a snapshot restore, `etcdctl del`) gives the slot up at once
//! rather than issuing up to its mark and then refusing for as long as its
//! lease lives.
//!
//! Uniqueness never rests on this: a node whose key is gone cannot raise the
//! mark (the write compares the key's lease), and the next holder starts
//! above the mark. The watch makes the node stop at once and take a slot
//! again, instead of looking ready while it is not.

use std::time::Duration;

use etcd_client::{Client, EventType, WatchOptions};

/// How soon a failed read or watch is tried again.
const RETRY: Duration = Duration::from_millis(200);

/// What became of a slot's key, as the node says it.
pub(crate) const DELETED: &str = "its key was deleted from etcd";
pub(crate) const TAKEN: &str = "its key in etcd no longer belongs to this node's lease";

/// Resolves when `key` is no longer held under `lease`, with what became of
/// it. Losing the watch is not losing the slot: the key is read again, and
/// watched from the revision of that read, so nothing that happened while
/// the watch was down is missed.
pub(crate) async fn until_lost(mut client: Client, key: String, lease: i64) -> &'static str {
    loop {
        match watch_once(&mut client, &key, lease).await {
            Ok(Some(lost)) => return lost,
            // etcd unreachable, the watch cancelled (a compaction) or ended:
            // read and watch again after a pause.
            Ok(None) | Err(_) => tokio::time::sleep(RETRY).await,
        }
    }
}

/// One read of the key, then one watch from just after it; `Ok(None)` when
/// the watch ended without a verdict.
async fn watch_once(
    client: &mut Client,
    key: &str,
    lease: i64,
) -> Result<Option<&'static str>, etcd_client::Error> {
    let read = client.get(key, None).await?;
    if let Some(lost) = verdict(read.kvs().first().map(|kv| kv.lease()), lease) {
        return Ok(Some(lost));
    }
    let Some(revision) = read.header().map(|h| h.revision()) else {
        return Ok(None);
    };
    let options = WatchOptions::new().with_start_revision(revision + 1);
    let mut stream = client.watch(key, Some(options)).await?;
    while let Some(response) = stream.message().await? {
        if response.canceled() {
            return Ok(None);
        }
        for event in response.events() {
            let lost = match event.event_type() {
                EventType::Delete => Some(DELETED),
                EventType::Put => verdict(event.kv().map(|kv| kv.lease()), lease),
            };
            if lost.is_some() {
                return Ok(lost);
            }
        }
    }
    Ok(None)
}

/// Whether a key whose lease is `found` (`None`: no key) is lost to the
/// holder of `lease`.
fn verdict(found: Option<i64>, lease: i64) -> Option<&'static str> {
    match found {
        None => Some(DELETED),
        Some(other) if other != lease => Some(TAKEN),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_lost_when_absent_or_under_another_lease() {
        assert_eq!(verdict(None, 7), Some(DELETED));
        assert_eq!(verdict(Some(8), 7), Some(TAKEN));
        // Put without a lease (etcdctl put): lease 0.
        assert_eq!(verdict(Some(0), 7), Some(TAKEN));
        assert_eq!(verdict(Some(7), 7), None);
    }
}

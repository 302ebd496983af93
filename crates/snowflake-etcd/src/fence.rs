//! The fence: how long the node may still issue, on its monotonic clock.
//!
//! The node may issue until the lease's TTL minus a margin after the
//! request that granted or renewed it was *sent*: etcd starts the lease's
//! countdown no earlier than that, so the node stops before etcd can give
//! its slot to another node, whatever the network delayed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The deadline after which the node must not issue; shared by the session
/// that moves it and the mark store that refuses to write past it.
#[derive(Debug)]
pub(crate) struct Fence {
    /// Nanoseconds after `base` until which the node may issue; 0: never.
    deadline: AtomicU64,
    base: Instant,
    ttl: Duration,
    margin: Duration,
}

impl Fence {
    /// A closed fence for leases of `ttl`, closing `margin` early.
    pub(crate) fn new(ttl: Duration, margin: Duration) -> Fence {
        Fence {
            deadline: AtomicU64::new(0),
            base: Instant::now(),
            ttl,
            margin,
        }
    }

    /// etcd granted or renewed the lease for `ttl_s` seconds, in answer to
    /// a request sent at `sent`. Never moves the deadline back: an old
    /// answer arriving late must not shorten a newer one.
    pub(crate) fn extend(&self, sent: Instant, ttl_s: i64) {
        let ttl = Duration::from_secs(u64::try_from(ttl_s).unwrap_or(0)).min(self.ttl);
        let until = sent + ttl.saturating_sub(self.margin);
        let nanos = until.saturating_duration_since(self.base).as_nanos() as u64;
        self.deadline.fetch_max(nanos, Ordering::AcqRel);
    }

    /// Time left to issue; `None` when no lease backs the node.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        let deadline = self.deadline.load(Ordering::Acquire);
        if deadline == 0 {
            return None;
        }
        let now = self.base.elapsed().as_nanos() as u64;
        Some(Duration::from_nanos(deadline.saturating_sub(now)))
    }

    /// Whether the node must not issue now.
    pub(crate) fn closed(&self) -> bool {
        self.remaining().is_none_or(|left| left.is_zero())
    }

    /// Stops issuing at once, until the next lease.
    pub(crate) fn close(&self) {
        self.deadline.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_for_the_ttl_less_the_margin_from_when_the_request_was_sent() {
        let fence = Fence::new(Duration::from_secs(10), Duration::from_secs(3));
        assert!(fence.closed());
        assert_eq!(fence.remaining(), None);
        fence.extend(Instant::now(), 10);
        let left = fence.remaining().unwrap();
        assert!(
            left <= Duration::from_secs(7) && left > Duration::from_secs(6),
            "{left:?}"
        );
        // A request sent long ago buys no time, and does not shorten the
        // deadline a newer answer set.
        fence.extend(Instant::now() - Duration::from_secs(60), 10);
        assert!(fence.remaining().unwrap() > Duration::from_secs(6));
        fence.close();
        assert!(fence.closed());
    }

    #[test]
    fn etcd_cannot_grant_more_than_asked() {
        let fence = Fence::new(Duration::from_secs(2), Duration::from_millis(500));
        fence.extend(Instant::now(), 3600);
        assert!(fence.remaining().unwrap() <= Duration::from_millis(1500));
    }

    #[test]
    fn a_request_older_than_the_ttl_leaves_the_fence_closed() {
        let fence = Fence::new(Duration::from_secs(2), Duration::from_millis(500));
        fence.extend(Instant::now() - Duration::from_secs(2), 2);
        assert!(fence.closed());
    }
}

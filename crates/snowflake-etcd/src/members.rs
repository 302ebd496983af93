//! Which etcd member each call goes to: the next in turn that has not just
//! failed to carry one.
//!
//! # Why not etcd-client's own balancing
//!
//! etcd-client spreads calls over the endpoints with tonic's balancer,
//! tower's power-of-two-choices over one connection per endpoint, whose
//! load tonic reports as always zero. A member that refuses connections (it
//! died, or was removed but is still listed) stays in the balancer's ready
//! set: its connection keeps the refusal and reports itself ready, so that
//! the next call through it fails at once with that refusal, and reconnects
//! only after. With every load equal, the balancer picks it for about one
//! call in three of a three-member cluster, forever, and etcd-client does
//! not try another member. After the etcd leader died a node lost its mark
//! top-ups that way, five in a row once, while its lease renewals, a
//! stream already open on a live member, went on.
//!
//! So calls go round the members in turn, skipping a member whose last call
//! failed below gRPC (no connection, the connection lost, no answer within
//! the call's time limit) for a while that doubles with each failure in a
//! row, up to [`AVOID_AT_MOST`]: a member that is gone costs one failed
//! call now and then, not a share of them all. A member that answers, even
//! with an error of etcd's own (no leader, a compare that failed), is
//! healthy. When every member is being avoided, calls go round all of them,
//! so that etcd coming back is found at once. Each client starts at a
//! member of its own, so that nodes spread their calls. The transport to
//! each member (TLS, timeouts, keep-alive) is tonic's own channel, built by
//! etcd-client from the connection options.
//!
//! A client learns that a member is gone from a call it sent there. A call
//! refused a connection never reached etcd, so the calls that must not be
//! lost to that (the mark's writes, the lease's grant and revocation,
//! `cluster status`'s reads) are sent again at once ([`past_refusals`]):
//! the member that refused is avoided by then, so the next try goes to
//! another.

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use etcd_client::{BalancedChannelBuilder, Channel as EtcdChannel};
use http::Uri;
use tokio::sync::mpsc;
use tonic::body::Body;
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use tower::BoxError;
use tower::util::BoxCloneSyncService;
use tower_service::Service;

/// How long a member is avoided after its first failure in a row; each
/// failure after doubles it.
const AVOID_FIRST: Duration = Duration::from_millis(500);
/// The longest a member is avoided: how soon a member that came back is
/// used again, while the others carry the calls.
const AVOID_AT_MOST: Duration = Duration::from_secs(8);

/// Makes etcd-client's channel: calls go round the members (see the
/// module's documentation).
pub(crate) struct InTurn;

impl BalancedChannelBuilder for InTurn {
    type Error = etcd_client::Error;

    fn balanced_channel(
        self,
        buffer_size: usize,
    ) -> Result<(EtcdChannel, mpsc::Sender<Change<Uri, Endpoint>>), Self::Error> {
        let (changes, received) = mpsc::channel(buffer_size);
        let members = Members {
            table: Arc::new(Mutex::new(Table {
                changes: received,
                members: Vec::new(),
                // Any member to start with: a hash with a random key.
                next: RandomState::new().hash_one(0) as usize,
            })),
            chosen: None,
        };
        Ok((
            EtcdChannel::Custom(BoxCloneSyncService::new(members)),
            changes,
        ))
    }
}

/// Runs `call`, and again at once while a member refuses its connection, up
/// to `members` times in all: a call refused never reached etcd, and the
/// member that refused it is avoided by now, so the next try goes to
/// another. Any other failure may have reached etcd, and is returned.
pub(crate) async fn past_refusals<T, F>(
    members: usize,
    mut call: impl FnMut() -> F,
) -> Result<T, etcd_client::Error>
where
    F: Future<Output = Result<T, etcd_client::Error>>,
{
    let mut tries = members.max(1);
    loop {
        match call().await {
            Err(err) if tries > 1 && refused(&err) => tries -= 1,
            answer => return answer,
        }
    }
}

/// Whether a member refused the call's connection: the call never reached
/// etcd.
pub(crate) fn refused(err: &etcd_client::Error) -> bool {
    let etcd_client::Error::GRpcStatus(status) = err else {
        return false;
    };
    let mut cause = std::error::Error::source(status);
    while let Some(err) = cause {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        cause = err.source();
    }
    false
}

/// One member: its channel, and how its calls went.
struct Member {
    uri: Uri,
    channel: Channel,
    health: Arc<Mutex<Health>>,
}

/// A member's calls that failed below gRPC, in a row.
#[derive(Debug, Default)]
struct Health {
    failures: u32,
    avoid_until: Option<Instant>,
}

impl Health {
    fn avoided(&self, now: Instant) -> bool {
        self.avoid_until.is_some_and(|until| now < until)
    }

    fn failed(&mut self, now: Instant) {
        self.failures = self.failures.saturating_add(1);
        let doublings = (self.failures - 1).min(16);
        let avoid = AVOID_FIRST.saturating_mul(1 << doublings);
        self.avoid_until = Some(now + avoid.min(AVOID_AT_MOST));
    }

    fn answered(&mut self) {
        *self = Health::default();
    }
}

/// The members, as etcd-client adds and removes them, and whose turn is next.
struct Table {
    changes: mpsc::Receiver<Change<Uri, Endpoint>>,
    members: Vec<Member>,
    next: usize,
}

impl Table {
    /// The member for the next call, its turn taken; `None` without members.
    fn take_turn(&mut self) -> Option<(Channel, Arc<Mutex<Health>>)> {
        while let Ok(change) = self.changes.try_recv() {
            match change {
                Change::Insert(uri, endpoint) => {
                    self.members.retain(|m| m.uri != uri);
                    self.members.push(Member {
                        uri,
                        // Connects on first use, and again after a failure.
                        channel: endpoint.connect_lazy(),
                        health: Arc::default(),
                    });
                }
                Change::Remove(uri) => self.members.retain(|m| m.uri != uri),
            }
        }
        let now = Instant::now();
        let members = &self.members;
        let chosen = next_in_turn(members.len(), self.next, |i| {
            members[i]
                .health
                .lock()
                .is_ok_and(|health| health.avoided(now))
        })?;
        self.next = chosen + 1;
        let member = &self.members[chosen];
        Some((member.channel.clone(), Arc::clone(&member.health)))
    }
}

/// The first of `count` members, starting at `from` and going round, that
/// is not `avoided`; if every one is, the one at `from`.
fn next_in_turn(count: usize, from: usize, avoided: impl Fn(usize) -> bool) -> Option<usize> {
    if count == 0 {
        return None;
    }
    let from = from % count;
    let round = (0..count).map(|step| (from + step) % count);
    Some(round.clone().find(|&i| !avoided(i)).unwrap_or(from))
}

/// The channel etcd-client calls through; each clone chooses on its own.
struct Members {
    table: Arc<Mutex<Table>>,
    /// Chosen by `poll_ready`, for the next `call`.
    chosen: Option<(Channel, Arc<Mutex<Health>>)>,
}

impl Clone for Members {
    fn clone(&self) -> Self {
        Members {
            table: Arc::clone(&self.table),
            chosen: None,
        }
    }
}

type Answer = Result<http::Response<Body>, BoxError>;

impl Service<http::Request<Body>> for Members {
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Answer> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        if self.chosen.is_none() {
            let mut table = self
                .table
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let chosen = table.take_turn().ok_or("no etcd endpoints")?;
            self.chosen = Some(chosen);
        }
        let (channel, health) = self.chosen.as_mut().expect("chosen above");
        let ready = ready!(channel.poll_ready(cx));
        if ready.is_err() {
            // Its channel is closed for good: fail this call, and choose
            // afresh for the next.
            if let Ok(mut health) = health.lock() {
                health.failed(Instant::now());
            }
            self.chosen = None;
        }
        Poll::Ready(ready.map_err(BoxError::from))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let (mut channel, health) = self.chosen.take().expect("poll_ready comes first");
        let answer = channel.call(request);
        Box::pin(async move {
            let answer = answer.await;
            if let Ok(mut health) = health.lock() {
                match &answer {
                    Ok(_) => health.answered(),
                    Err(_) => health.failed(Instant::now()),
                }
            }
            answer.map_err(BoxError::from)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_go_round_the_members_that_are_not_avoided() {
        let none = |_| false;
        let turns: Vec<_> = (0..4).map(|from| next_in_turn(3, from, none)).collect();
        assert_eq!(turns, [Some(0), Some(1), Some(2), Some(0)]);
        // Member 1 is avoided: its turn goes to the one after it.
        let one = |i| i == 1;
        assert_eq!(next_in_turn(3, 1, one), Some(2));
        assert_eq!(next_in_turn(3, 0, one), Some(0));
        // Two of three avoided, from any turn: the one left.
        for from in 0..3 {
            assert_eq!(next_in_turn(3, from, |i| i != 2), Some(2));
        }
        // All avoided: round all of them, as if none were.
        assert_eq!(next_in_turn(3, 1, |_| true), Some(1));
        assert_eq!(next_in_turn(3, 5, |_| true), Some(2));
        assert_eq!(next_in_turn(0, 0, none), None);
    }

    #[test]
    fn a_member_is_avoided_longer_with_each_failure_in_a_row_until_it_answers() {
        let start = Instant::now();
        let mut health = Health::default();
        assert!(!health.avoided(start));
        let mut avoided_for = Vec::new();
        for _ in 0..8 {
            health.failed(start);
            avoided_for.push(health.avoid_until.unwrap() - start);
        }
        let ms: Vec<u128> = avoided_for.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000]);
        assert!(health.avoided(start + Duration::from_millis(7999)));
        assert!(!health.avoided(start + AVOID_AT_MOST));
        health.answered();
        assert!(!health.avoided(start));
        health.failed(start);
        assert_eq!(health.avoid_until.unwrap() - start, AVOID_FIRST);
        // However many failures: no overflow, the longest wait.
        health.failures = u32::MAX;
        health.failed(start);
        assert_eq!(health.avoid_until.unwrap() - start, AVOID_AT_MOST);
    }
}

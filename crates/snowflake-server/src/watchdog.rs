//! One connection's watchdog: it closes a connection on which no byte has
//! moved for the idle timeout, or whose request headers have not all come
//! by their deadline.
//!
//! The header deadline is hyper's (its `header_read_timeout`, which also
//! bounds the wait for the next request on a kept-alive connection), but
//! kept here rather than in tokio's timer: hyper asks its timer for a new
//! sleep before every request and drops it once the headers are in, and a
//! tokio sleep is put into the timer wheel and taken out again under the
//! wheel's lock each time, the largest single cost the one-ID route paid
//! above a bare axum route. Here arming it is one store, and the watchdog,
//! which wakes a few times per timeout anyway, checks it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The watchdog looks this many times per timeout (the shorter of the
/// two), so a connection is closed between one and one and a quarter
/// timeouts after its last byte or its header deadline.
const SAMPLES: u32 = 4;

/// What a connection has been doing, as its watchdog sees it.
pub(crate) struct Activity {
    /// When the connection began: deadlines are kept as times since.
    began: Instant,
    /// Reads and writes that moved bytes: a count rather than a time, so
    /// the hot path reads no clock.
    moves: AtomicU64,
    /// The header deadline hyper set, in microseconds since `began` plus
    /// one; 0 while none is set.
    header_deadline: AtomicU64,
}

/// Why the watchdog gave up on a connection.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No byte moved either way for the idle timeout.
    Idle,
    /// The request's headers did not all come by their deadline.
    SlowHeaders,
}

impl Activity {
    pub(crate) fn new() -> Self {
        Activity {
            began: Instant::now(),
            moves: AtomicU64::new(0),
            header_deadline: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        self.moves.fetch_add(1, Ordering::Relaxed);
    }

    /// A request's headers are all in: the deadline hyper set for them is
    /// lifted. Called as the request reaches the service, which hyper does
    /// as soon as it has parsed the headers, dropping its sleep. Lifted
    /// there rather than when the sleep is dropped, the sleep holds nothing
    /// and costs no allocation.
    pub(crate) fn headers_in(&self) {
        self.header_deadline.store(0, Ordering::Relaxed);
    }

    /// A deadline as the value `header_deadline` holds: never 0, and
    /// rounded up, so that it is never earlier than asked.
    fn mark(&self, deadline: Instant) -> u64 {
        let since = deadline.saturating_duration_since(self.began);
        u64::try_from(since.as_micros())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    }

    /// Completes once no byte has moved for `idle`, or once a header
    /// deadline has passed, whichever comes first.
    pub(crate) async fn watch(&self, idle: Duration, header: Duration) -> Verdict {
        // At least a millisecond: a zero timeout from a library caller
        // must not turn the watchdog into a spin.
        let step = (idle.min(header) / SAMPLES).max(Duration::from_millis(1));
        let mut seen = self.moves.load(Ordering::Relaxed);
        let mut quiet = Duration::ZERO;
        loop {
            tokio::time::sleep(step).await;
            let deadline = self.header_deadline.load(Ordering::Relaxed);
            if deadline != 0 && self.mark(Instant::now()) > deadline {
                return Verdict::SlowHeaders;
            }
            let now = self.moves.load(Ordering::Relaxed);
            if now == seen {
                quiet += step;
                if quiet >= idle {
                    return Verdict::Idle;
                }
            } else {
                seen = now;
                quiet = Duration::ZERO;
            }
        }
    }
}

/// hyper's timer for one HTTP/1 connection, which hyper uses only for the
/// header deadline: each sleep it makes sets the deadline its connection's
/// watchdog enforces.
pub(crate) struct HeaderTimer(pub(crate) Arc<Activity>);

impl Timer for HeaderTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        let mark = self.0.mark(deadline);
        self.0.header_deadline.store(mark, Ordering::Relaxed);
        Box::pin(HeaderDeadline)
    }
}

/// A header deadline as hyper holds it. It never completes by itself: when
/// the deadline passes, the watchdog closes the connection, which is what
/// hyper does when its own sleep completes.
struct HeaderDeadline;

impl Future for HeaderDeadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Sleep for HeaderDeadline {}

/// A stream that notes when bytes move, for the idle timeout.
pub(crate) struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl Watched {
    pub(crate) fn new(inner: TcpStream, activity: Arc<Activity>) -> Self {
        Watched { inner, activity }
    }

    fn moved<T>(&self, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if let Poll::Ready(Ok(_)) = &poll {
            self.activity.touch();
        }
        poll
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.moved(poll)
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.moved(poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.moved(poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_header_deadline_closes_the_connection_until_it_is_lifted() {
        let activity = Arc::new(Activity::new());
        let timer = HeaderTimer(Arc::clone(&activity));
        let idle = Duration::from_millis(400);
        let header = Duration::from_secs(1);
        // Lifted before it passed: only the idle timeout is left.
        drop(timer.sleep(Duration::from_millis(50)));
        activity.headers_in();
        let start = Instant::now();
        assert_eq!(activity.watch(idle, header).await, Verdict::Idle);
        assert!(start.elapsed() >= idle, "{:?}", start.elapsed());
        // Set again: the later deadline stands.
        let _first = timer.sleep(Duration::from_secs(100));
        let _second = timer.sleep(Duration::from_millis(10));
        let header = Duration::from_millis(400);
        let idle = Duration::from_secs(60);
        assert_eq!(activity.watch(idle, header).await, Verdict::SlowHeaders);
        // Bytes moving do not hold off a passed deadline.
        let _third = timer.sleep(Duration::from_millis(10));
        let mover = Arc::clone(&activity);
        let moving = tokio::spawn(async move {
            loop {
                mover.touch();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        assert_eq!(activity.watch(idle, header).await, Verdict::SlowHeaders);
        moving.abort();
    }
}

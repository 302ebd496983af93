//! One connection's watchdog: it closes a connection on which no byte has
//! moved for the idle timeout, or whose request headers have not all come
//! by their deadline.
//!
//! A new connection must send its first request's headers within the
//! header timeout too: the deadline is set when the connection begins, so
//! a client that connects and says nothing, or sends half an HTTP/2
//! preface, holds its place no longer than a slow one.
//!
//! HTTP/2 moves bytes that are not requests (PING, SETTINGS, WINDOW_UPDATE
//! frames), so on an HTTP/2 connection bytes do not count: what counts is
//! its streams. While none is open, the connection waits for a request
//! under the header deadline, as a kept-alive HTTP/1 connection does; while
//! some are open, it is idle when none of their answers moved for the idle
//! timeout.
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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
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
    /// The header deadline (hyper's, or ours while an HTTP/2 connection
    /// has no stream open), in microseconds since `began` plus one; 0 while
    /// none is set.
    header_deadline: AtomicU64,
    /// The header timeout, for the deadlines set here.
    header_timeout: Duration,
    /// Set once the connection turned out to speak HTTP/2.
    http2: AtomicBool,
    /// HTTP/2 streams open: requests in the route or answers being sent.
    streams: AtomicU64,
    /// Streams opened and frames of answers sent, on HTTP/2: what counts
    /// as activity there instead of bytes.
    progress: AtomicU64,
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
    /// A connection that began now and must send its first request's
    /// headers within `header_timeout`.
    pub(crate) fn new(header_timeout: Duration) -> Self {
        let began = Instant::now();
        let activity = Activity {
            began,
            moves: AtomicU64::new(0),
            header_deadline: AtomicU64::new(0),
            header_timeout,
            http2: AtomicBool::new(false),
            streams: AtomicU64::new(0),
            progress: AtomicU64::new(0),
        };
        activity.arm_header_deadline();
        activity
    }

    /// Sets the header deadline a header timeout from now.
    fn arm_header_deadline(&self) -> u64 {
        let mark = self.mark(Instant::now() + self.header_timeout);
        self.header_deadline.store(mark, Ordering::Relaxed);
        mark
    }

    /// An HTTP/2 stream opened (its request reached the service): it counts
    /// as activity, and the connection is no longer waiting for a request.
    /// The stream is open until the guard is dropped with its answer.
    pub(crate) fn open_stream(self: &Arc<Self>) -> StreamGuard {
        self.http2.store(true, Ordering::Relaxed);
        self.streams.fetch_add(1, Ordering::AcqRel);
        self.progress.fetch_add(1, Ordering::Relaxed);
        self.header_deadline.store(0, Ordering::Relaxed);
        StreamGuard(Arc::clone(self))
    }

    /// A frame of an HTTP/2 answer was sent on.
    fn progressed(&self) {
        self.progress.fetch_add(1, Ordering::Relaxed);
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
            let now = if self.http2.load(Ordering::Relaxed) {
                self.progress.load(Ordering::Relaxed)
            } else {
                self.moves.load(Ordering::Relaxed)
            };
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

/// An open HTTP/2 stream, closed when dropped: the last to close sets the
/// header deadline for the connection's next request.
pub(crate) struct StreamGuard(Arc<Activity>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let activity = &self.0;
        activity.progressed();
        if activity.streams.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mark = activity.arm_header_deadline();
            // A stream that opened meanwhile lifted the deadline before
            // this set it: lift it again, unless a newer one stands.
            if activity.streams.load(Ordering::Acquire) != 0 {
                let _ = activity.header_deadline.compare_exchange(
                    mark,
                    0,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
        }
    }
}

/// An HTTP/2 answer's body, which keeps its stream open until it is
/// dropped and counts each frame it gives as activity.
pub(crate) struct Tracked {
    body: Body,
    guard: StreamGuard,
}

impl Tracked {
    pub(crate) fn new(body: Body, guard: StreamGuard) -> Self {
        Tracked { body, guard }
    }
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let poll = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(Some(Ok(_))) = &poll {
            self.guard.0.progressed();
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
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
        let activity = Arc::new(Activity::new(Duration::from_secs(3600)));
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

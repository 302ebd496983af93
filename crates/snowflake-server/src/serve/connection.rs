//! One connection: served by hyper (HTTP/1.1, and HTTP/2 when the operator
//! turns it on) under its watchdog, until it ends, goes idle, is too slow
//! to send a request's headers, or the server closes.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::Version;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use pin_project_lite::pin_project;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tower::Service;

use super::watchdog::{Activity, HeaderTimer, StreamGuard, Tracked, Verdict, Watched};
use crate::config::Config;

/// The most a connection buffers, each way: request headers beyond it are
/// refused (431), and a response waits for the client once this much is
/// queued, which bounds what a client that stops reading costs.
const MAX_BUF: usize = Config::MAX_BUFFER;

/// A connection's two timeouts, which its watchdog keeps.
#[derive(Clone, Copy)]
pub(super) struct Timeouts {
    pub(super) idle: Duration,
    pub(super) header: Duration,
}

/// Serves one connection until it ends, goes idle, is too slow to send a
/// request's headers, or the server closes.
pub(super) async fn connection(
    stream: TcpStream,
    router: Router,
    timeouts: Timeouts,
    http2: bool,
    mut closing: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    let activity = Arc::new(Activity::new(timeouts.header));
    let builder = builder(&activity, timeouts.header, http2);
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity)));
    let seen = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        seen.headers_in();
        // An HTTP/2 stream is open until its answer's body is done.
        let guard = (request.version() == Version::HTTP_2).then(|| seen.open_stream());
        Routed {
            inner: router.clone().call(request),
            guard,
        }
    });
    let served = builder.serve_connection(io, service);
    tokio::pin!(served);
    let mut asked_to_finish = *closing.borrow();
    if asked_to_finish {
        served.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            result = served.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!(error = %err, "a connection ended with an error");
                }
                return;
            }
            changed = closing.changed(), if !asked_to_finish => {
                // An error means the sender is gone, which it only is once
                // the server closes: finish either way.
                let _ = changed;
                asked_to_finish = true;
                served.as_mut().graceful_shutdown();
            }
            verdict = activity.watch(timeouts.idle, timeouts.header) => {
                match verdict {
                    Verdict::Idle => tracing::debug!("closing a connection idle for {:?}", timeouts.idle),
                    Verdict::SlowHeaders => tracing::debug!("closing a connection whose request headers took longer than {:?}", timeouts.header),
                }
                return;
            }
        }
    }
}

/// How the connection is spoken: a builder per connection, since each has
/// its own header timer; it costs two small allocations a connection,
/// against the tokio sleep a shared timer made and boxed for every request.
fn builder(
    activity: &Arc<Activity>,
    header: Duration,
    http2: bool,
) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(HeaderTimer(Arc::clone(activity)))
        .header_read_timeout(header)
        .max_buf_size(MAX_BUF);
    if http2 {
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(Config::HTTP2_MAX_STREAMS)
            .max_send_buf_size(MAX_BUF)
            .initial_stream_window_size(MAX_BUF as u32)
            .initial_connection_window_size(4 * MAX_BUF as u32);
    } else {
        builder = builder.http1_only();
    }
    builder
}

pin_project! {
    /// The route's answer; on HTTP/2, with its body tracked so that its
    /// stream counts as open until the body is done.
    struct Routed<F> {
        #[pin]
        inner: F,
        guard: Option<StreamGuard>,
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Routed<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let answer = ready!(this.inner.poll(cx));
        Poll::Ready(answer.map(|response| match this.guard.take() {
            None => response,
            Some(guard) => response.map(|body| Body::new(Tracked::new(body, guard))),
        }))
    }
}

//! Running the service on a listener until a signal, then letting go.
//!
//! Connections are served here rather than by `axum::serve`, which sets no
//! timer: without one hyper has no header-read timeout, so clients trickling
//! headers were never cut off, and a half-sent request held a shutdown for
//! as long as its client liked. Here every connection has a header timeout,
//! an idle timeout, a place under a cap, and a deadline at shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::io;
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
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tower::Service;

use crate::config::Config;
use crate::source::IdSource;
use crate::state::AppState;
use crate::watchdog::{Activity, HeaderTimer, StreamGuard, Tracked, Verdict, Watched};

/// The most a connection buffers, each way: request headers beyond it are
/// refused (431), and a response waits for the client once this much is
/// queued, which bounds what a client that stops reading costs.
const MAX_BUF: usize = Config::MAX_BUFFER;

/// Why the service stopped with an error.
#[derive(Debug)]
pub enum ServeError {
    /// The listener failed.
    Io(std::io::Error),
    /// The clock reads a time the layout cannot hold, so no ID could be
    /// issued: before its epoch or past the end of its time field.
    Clock(String),
    /// The source could not flush its state on the way out.
    Shutdown(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Io(err) => write!(f, "cannot serve: {err}"),
            ServeError::Clock(why) => write!(f, "cannot serve: {why}"),
            ServeError::Shutdown(why) => write!(f, "cannot shut down cleanly: {why}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Runs the service on `listener`, which the caller bound (so it knows the
/// address before anything is served), until SIGTERM or Ctrl-C; requests in
/// flight get [`Config::shutdown_timeout`] to finish, then the source
/// flushes its state.
pub async fn serve(
    listener: TcpListener,
    source: Arc<dyn IdSource>,
    config: Config,
) -> Result<(), ServeError> {
    serve_until(listener, source, config, shutdown_signal()).await
}

/// [`serve`], stopping when `stop` completes instead of on a signal.
///
/// Refuses to start when the clock reads a time outside the layout's range.
/// On a loopback address, requests must name a loopback host or one of
/// [`Config::allowed_hosts`].
pub async fn serve_until(
    listener: TcpListener,
    source: Arc<dyn IdSource>,
    mut config: Config,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    check_clock(source.as_ref())?;
    if addr.ip().is_loopback() {
        config.loopback_hosts_only = true;
    }
    tracing::info!(%addr, layout = %source.layout(), "listening on http://{addr}/");
    let state = Arc::new(AppState::new(Arc::clone(&source)));
    // The recorder folds histogram samples only when asked; without this an
    // unscraped server would hold every sample it ever took.
    let upkeep_state = Arc::clone(&state);
    let upkeep = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep_state.telemetry.handle().run_upkeep();
        }
    });
    let router = crate::app::app(state, &config);
    let served = accept(listener, router, &config, stop).await;
    upkeep.abort();
    // Until the aborted task is dropped it holds the state, and through it
    // the source, which must be the last holder to flush its mark.
    let _ = upkeep.await;
    served.map_err(ServeError::Io)?;
    tracing::info!("shutting down");
    source.shutdown().await.map_err(ServeError::Shutdown)
}

/// The clock must read a time the layout holds, or every request would fail.
fn check_clock(source: &dyn IdSource) -> Result<(), ServeError> {
    let layout = source.layout();
    let now = source.clock().now_ms();
    let show = |ms: i64| {
        jiff::Timestamp::from_millisecond(ms).map_or_else(|_| format!("{ms} ms"), |t| t.to_string())
    };
    if now < layout.epoch_ms() {
        return Err(ServeError::Clock(format!(
            "the clock reads {}, before the layout's epoch {}; \
             give an epoch in the past",
            show(now),
            show(layout.epoch_ms())
        )));
    }
    if now > layout.last_timestamp_ms() {
        return Err(ServeError::Clock(format!(
            "the clock reads {}, past the last time the layout holds ({}); \
             give a later epoch or a wider time field",
            show(now),
            show(layout.last_timestamp_ms())
        )));
    }
    Ok(())
}

/// Accepts connections until `stop`, each under the connection cap, then
/// asks them to finish and closes those left at the deadline.
async fn accept(
    listener: TcpListener,
    router: Router,
    config: &Config,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let (closing, closing_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        while connections.try_join_next().is_some() {}
        // Past the cap, stop accepting: new clients wait in the backlog.
        let permit = tokio::select! {
            () = &mut stop => break,
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    // Out of file descriptors and the like: pause rather
                    // than spin; the error is not the listener's end.
                    tracing::warn!(error = %err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        connections.spawn(connection(
            stream,
            router.clone(),
            Timeouts {
                idle: config.idle_timeout,
                header: config.header_timeout,
            },
            config.http2,
            closing_rx.clone(),
            permit,
        ));
    }
    drop(listener);
    let _ = closing.send(true);
    let drained = tokio::time::timeout(config.shutdown_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "connections still open at the shutdown deadline; closing them"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// A connection's two timeouts, which its watchdog keeps.
#[derive(Clone, Copy)]
struct Timeouts {
    idle: Duration,
    header: Duration,
}

/// Serves one connection until it ends, goes idle, is too slow to send a
/// request's headers, or the server closes.
async fn connection(
    stream: TcpStream,
    router: Router,
    timeouts: Timeouts,
    http2: bool,
    mut closing: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    let activity = Arc::new(Activity::new(timeouts.header));
    // A builder per connection, since each has its own header timer; it
    // costs two small allocations a connection, against the tokio sleep a
    // shared timer made and boxed for every request.
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(HeaderTimer(Arc::clone(&activity)))
        .header_read_timeout(timeouts.header)
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

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("signal received; finishing requests in flight");
}

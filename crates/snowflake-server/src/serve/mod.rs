//! Running the service on a listener until a signal, then letting go.
//!
//! Connections are served here rather than by `axum::serve`, which sets no
//! timer: without one hyper has no header-read timeout, so clients trickling
//! headers were never cut off, and a half-sent request held a shutdown for
//! as long as its client liked. Here every connection has a header timeout,
//! an idle timeout, a place under a cap, and a deadline at shutdown.

mod connection;
mod watchdog;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::config::Config;
use crate::source::IdSource;
use crate::state::AppState;
use connection::{Timeouts, connection};

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
/// flight get the [shutdown timeout](Config::with_shutdown_timeout) to
/// finish, then the source flushes its state.
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
/// the [allowed hosts](Config::with_allowed_hosts).
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
    let state = Arc::new(AppState::new(Arc::clone(&source), &config));
    report_clock_and_lifetime(&state);
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
    let router = crate::app::router(state, &config);
    let served = accept(listener, router, &config, stop).await;
    upkeep.abort();
    // Until the aborted task is dropped it holds the state, and through it
    // the source, which must be the last holder to flush its mark.
    let _ = upkeep.await;
    served.map_err(ServeError::Io)?;
    tracing::info!("shutting down");
    source.shutdown().await.map_err(ServeError::Shutdown)
}

/// One line on what the kernel says of the clock, and a warning if the
/// layout has less than a year left: what an operator should know before
/// the first ID.
fn report_clock_and_lifetime(state: &AppState) {
    match state.kernel_clock() {
        Some(clock) if clock.synchronised => tracing::info!(
            max_error_ms = clock.max_error_ms,
            estimated_error_ms = clock.estimated_error_ms,
            offset_ms = clock.offset_ms,
            "the kernel says the clock is synchronised"
        ),
        Some(clock) => tracing::warn!(
            max_error_ms = clock.max_error_ms,
            "the kernel says the clock is not synchronised; IDs from nodes whose clocks \
             disagree do not sort by time (--require-clock-sync makes readiness wait for it)"
        ),
        None => tracing::info!("the kernel's view of the clock cannot be read here"),
    }
    let left = state.time_left();
    if left.is_short() {
        tracing::warn!(
            runs_out_ms = left.runs_out_ms(),
            "the layout's time field runs out in {left}: plan a new layout (snowflake plan)"
        );
    }
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
                Ok((stream, _)) => {
                    cap_send_buffer(&stream);
                    stream
                }
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
    drain(connections, config.shutdown_timeout).await;
    Ok(())
}

/// Waits up to `deadline` for the connections asked to finish, then closes
/// those left.
async fn drain(mut connections: JoinSet<()>, deadline: Duration) {
    let drained = tokio::time::timeout(deadline, async {
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
}

/// Caps what the kernel queues for a client that does not read (see
/// [`Config::SEND_BUFFER`]); a socket that refuses keeps the kernel's own
/// size, which only costs memory.
fn cap_send_buffer(stream: &tokio::net::TcpStream) {
    if let Err(err) = socket2::SockRef::from(stream).set_send_buffer_size(Config::SEND_BUFFER) {
        tracing::debug!(error = %err, "cannot cap a connection's send buffer");
    }
}

/// The signals that stop the service, registered as it is called, not when
/// the future is first polled: the accept loop polls it only once it runs,
/// and a SIGTERM before that would otherwise kill the process at once, with
/// no requests finished and no mark written.
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        [SignalKind::terminate(), SignalKind::interrupt()].map(|kind| signal(kind).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let [terminate, interrupt] = signals;
            let wait = |signal: Option<tokio::signal::unix::Signal>| async move {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(terminate) => {},
                () = wait(interrupt) => {},
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("signal received; finishing requests in flight");
    }
}

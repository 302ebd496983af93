//! Running the service on a listener until a signal, then letting go.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::config::Config;
use crate::source::IdSource;
use crate::state::AppState;

/// Why the service stopped with an error.
#[derive(Debug)]
pub enum ServeError {
    /// The listener failed.
    Io(std::io::Error),
    /// The source could not flush its state on the way out.
    Shutdown(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Io(err) => write!(f, "cannot serve: {err}"),
            ServeError::Shutdown(why) => write!(f, "cannot shut down cleanly: {why}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Runs the service on `listener`, which the caller bound (so it knows the
/// address before anything is served), until SIGTERM or Ctrl-C; requests in
/// flight finish, then the source flushes its state.
pub async fn serve(
    listener: TcpListener,
    source: Arc<dyn IdSource>,
    config: Config,
) -> Result<(), ServeError> {
    serve_until(listener, source, config, shutdown_signal()).await
}

/// [`serve`], stopping when `stop` completes instead of on a signal.
pub async fn serve_until(
    listener: TcpListener,
    source: Arc<dyn IdSource>,
    config: Config,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    tracing::info!(%addr, layout = %source.layout(), "listening on http://{addr}/");
    let state = Arc::new(AppState::new(Arc::clone(&source)));
    // The recorder folds histogram samples only when asked; without this an
    // unscraped server would hold every sample it ever took.
    let handle = state.metrics.clone();
    let upkeep = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            handle.run_upkeep();
        }
    });
    let router = crate::app::app(state, &config);
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(stop)
        .await;
    upkeep.abort();
    served.map_err(ServeError::Io)?;
    tracing::info!("shutting down");
    source.shutdown().await.map_err(ServeError::Shutdown)
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

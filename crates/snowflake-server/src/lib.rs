//! The snowflake HTTP service: the web tool at `/`, a JSON API under
//! `/api/v1` that composes, decodes and hands out IDs, health and metrics.
//!
//! [`app`] builds the whole service as a `Router`, so tests drive it with
//! `tower::ServiceExt::oneshot` and no socket; [`serve`] runs it on a
//! listener until SIGTERM or Ctrl-C, then flushes the generator's mark.
//!
//! ```
//! use std::sync::Arc;
//! use axum::body::Body;
//! use axum::http::{Method, Request, StatusCode};
//! use snowflake_server::{AppState, Config, app, generator};
//! use tower::ServiceExt;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let config = Config::default();
//! let state = Arc::new(AppState::new(Arc::new(generator(&config)?)));
//! let request = Request::post("/api/v1/ids?count=3").body(Body::empty()).unwrap();
//! let response = app(state, &config).oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! # Ok::<(), snowflake::Error>(())
//! # }).unwrap();
//! ```
#![warn(missing_docs)]

mod api;
mod health;
pub mod input;
mod openapi;
mod page;
mod problem;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::{Method, Request, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use snowflake::{Clock, FileMarkStore, Generator, Layout, SystemClock};
use snowflake_etcd::{Cluster, ClusterConfig};
use tower::ServiceBuilder;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

pub use api::MAX_COUNT;
pub use page::{content_security_policy, standalone_page};
pub use problem::Problem;

/// The generator the service issues from. The clock is chosen at run time:
/// the system clock in production, a manual one in tests; the indirection
/// costs a nanosecond against a request's microseconds.
pub type ServerGenerator = Generator<Arc<dyn Clock>>;

/// How the service is set up; the CLI fills it from flags and environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; loopback by default.
    pub listen: SocketAddr,
    /// The layout IDs are issued in.
    pub layout: Layout,
    /// This node's field values by name.
    pub node: Vec<(String, u64)>,
    /// Where to keep the high-water mark, if anywhere.
    pub state_file: Option<PathBuf>,
    /// How long one request may take.
    pub request_timeout: Duration,
    /// How many requests are served at once; more wait.
    pub max_concurrency: usize,
    /// Cluster mode: lease a slot on etcd instead of a fixed node identity.
    pub cluster: Option<ClusterConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            layout: Layout::twitter(),
            node: Vec::new(),
            state_file: None,
            request_timeout: Duration::from_secs(10),
            max_concurrency: 1024,
            cluster: None,
        }
    }
}

/// Requests for up to this many IDs are served on the async worker.
const INLINE_COUNT: u64 = 1024;

/// Request bodies are small or absent; anything larger is refused with 413.
const BODY_LIMIT: usize = 64 * 1024;

/// Where IDs come from: one node on its own, or a node of a cluster that
/// holds a slot only while its lease on etcd lasts.
#[derive(Debug, Clone)]
pub enum Source {
    /// A fixed node identity.
    Standalone(Arc<ServerGenerator>),
    /// A slot leased from etcd.
    Cluster(Cluster),
}

/// What every handler shares.
pub struct AppState {
    source: Source,
    clock: Arc<dyn Clock>,
    metrics: PrometheusHandle,
    /// `{"layout":"<name>","ids":[`, the start of every JSON ids body,
    /// made once rather than per request.
    ids_prefix: String,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State around a generator built by the caller.
    pub fn new(generator: Arc<ServerGenerator>) -> Self {
        let clock = Arc::clone(generator.clock());
        let layout = generator.layout().clone();
        AppState::with_source(Source::Standalone(generator), layout, clock)
    }

    /// State around any source of IDs.
    pub fn with_source(source: Source, layout: Layout, clock: Arc<dyn Clock>) -> Self {
        AppState {
            ids_prefix: format!(
                "{{\"layout\":{},\"ids\":[",
                serde_json::Value::from(layout.name().into_owned())
            ),
            source,
            clock,
            metrics: metrics_handle(),
        }
    }

    /// The clock the service reads for "now".
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Runs `issue` on the generator the node may issue from now. In a
    /// cluster the fence is checked before and after, so IDs made while the
    /// process was paused past its lease are never handed out.
    fn with_generator<T>(
        &self,
        issue: impl FnOnce(&ServerGenerator) -> Result<T, snowflake::Error>,
    ) -> Result<T, Problem> {
        match &self.source {
            Source::Standalone(generator) => Ok(issue(generator)?),
            Source::Cluster(cluster) => {
                let holding = cluster
                    .current()
                    .map_err(|why| Problem::unavailable(why.to_string()))?;
                let out = issue(&holding.generator)?;
                if !cluster.still_valid(&holding) {
                    return Err(Problem::unavailable(
                        "fenced: the lease on etcd ended while these IDs were made; none were issued",
                    ));
                }
                Ok(out)
            }
        }
    }

    /// Whether the node can issue now, and if not, why.
    pub fn ready(&self) -> Result<serde_json::Value, Problem> {
        self.with_generator(|g| g.ready())?;
        Ok(match &self.source {
            Source::Standalone(_) => serde_json::json!({"status": "ready"}),
            Source::Cluster(cluster) => {
                let status = cluster.status();
                serde_json::json!({
                    "status": "ready",
                    "slot": status.slot,
                    "lease_remaining_s": status.lease_remaining_s,
                    "fencing_events": status.fencing_events,
                })
            }
        })
    }

    /// `count` fresh IDs as the response body: JSON, or one per line.
    fn issue(&self, count: u64, plain: bool) -> Result<Vec<u8>, Problem> {
        self.with_generator(|generator| self.write_ids(generator, count, plain))
    }

    /// Issues off the async workers when the batch is large: past one time
    /// unit's worth the generator may sleep until the next millisecond, and
    /// a worker must not.
    pub(crate) async fn issue_async(
        self: &Arc<Self>,
        count: u64,
        plain: bool,
    ) -> Result<Vec<u8>, Problem> {
        if count <= INLINE_COUNT {
            return self.issue(count, plain);
        }
        let state = Arc::clone(self);
        tokio::task::spawn_blocking(move || state.issue(count, plain))
            .await
            .map_err(|_| {
                Problem::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal server error",
                )
            })?
    }

    fn write_ids(
        &self,
        generator: &ServerGenerator,
        count: u64,
        plain: bool,
    ) -> Result<Vec<u8>, snowflake::Error> {
        let mut body = Vec::with_capacity(count as usize * 22 + 64);
        if !plain {
            body.extend_from_slice(self.ids_prefix.as_bytes());
        }
        let mut left = count;
        let mut buf = [0u8; 20];
        let mut first = true;
        while left > 0 {
            let batch = generator.next_ids(left)?;
            left -= batch.len() as u64;
            for id in batch {
                if plain {
                    body.extend_from_slice(id.to_decimal(&mut buf).as_bytes());
                    body.push(b'\n');
                } else {
                    if !first {
                        body.push(b',');
                    }
                    first = false;
                    body.push(b'"');
                    body.extend_from_slice(id.to_decimal(&mut buf).as_bytes());
                    body.push(b'"');
                }
            }
        }
        if !plain {
            body.extend_from_slice(b"]}");
        }
        Ok(body)
    }

    /// Copies the generator's counters into the metrics registry; called on
    /// each scrape, so the hot path pays nothing for them.
    fn publish_generator_metrics(&self) {
        let generator = match &self.source {
            Source::Standalone(generator) => Some(Arc::clone(generator)),
            Source::Cluster(cluster) => {
                let status = cluster.status();
                metrics::counter!("snowflake_cluster_fencing_events_total")
                    .absolute(status.fencing_events);
                metrics::gauge!("snowflake_cluster_lease_remaining_seconds")
                    .set(status.lease_remaining_s.unwrap_or(0.0));
                metrics::gauge!("snowflake_cluster_slot_held").set(if status.slot.is_some() {
                    1.0
                } else {
                    0.0
                });
                cluster.current().ok().map(|h| Arc::clone(&h.generator))
            }
        };
        let ready = self.ready().is_ok();
        metrics::gauge!("snowflake_ready").set(if ready { 1.0 } else { 0.0 });
        let Some(generator) = generator else {
            return;
        };
        let stats = generator.stats();
        metrics::counter!("snowflake_ids_issued_total").absolute(stats.issued);
        metrics::counter!("snowflake_sequence_exhaustion_waits_total")
            .absolute(stats.exhaustion_waits);
        metrics::counter!("snowflake_clock_backwards_total").absolute(stats.clock_backwards);
        metrics::gauge!("snowflake_clock_backwards_max_ms")
            .set(stats.clock_backwards_max_ms as f64);
        metrics::gauge!("snowflake_lead_ms").set(stats.lead_ms as f64);
        metrics::counter!("snowflake_mark_writes_total").absolute(stats.mark_writes);
    }
}

/// One Prometheus recorder per process, however many apps tests build.
fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new().set_buckets_for_metric(
                Matcher::Full("http_request_duration_seconds".into()),
                &[
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1.0, 2.5,
                ],
            );
            match builder {
                Ok(builder) => {
                    let recorder = builder.build_recorder();
                    let handle = recorder.handle();
                    // Fails only if another recorder was installed first.
                    let _ = metrics::set_global_recorder(recorder);
                    handle
                }
                Err(_) => PrometheusBuilder::new().build_recorder().handle(),
            }
        })
        .clone()
}

/// The request metrics of one (route, method, status).
#[derive(Clone)]
struct RouteMetrics {
    requests: metrics::Counter,
    latency: metrics::Histogram,
}

/// Handles per route, then per (method, status): registered once, so a
/// request costs two map lookups by reference and no allocation, instead of
/// building owned labels and searching the registry.
type RouteTable = HashMap<String, HashMap<(Method, u16), RouteMetrics>>;

fn route_metrics(route: &str, method: &Method, status: StatusCode) -> RouteMetrics {
    static TABLE: OnceLock<RwLock<RouteTable>> = OnceLock::new();
    let table = TABLE.get_or_init(Default::default);
    let key = (method.clone(), status.as_u16());
    if let Some(found) = table
        .read()
        .ok()
        .and_then(|t| t.get(route).and_then(|m| m.get(&key)).cloned())
    {
        return found;
    }
    let labels = [
        ("route", route.to_string()),
        ("method", method.to_string()),
        ("status", status.as_u16().to_string()),
    ];
    let made = RouteMetrics {
        requests: metrics::counter!("http_requests_total", &labels),
        latency: metrics::histogram!("http_request_duration_seconds", &labels),
    };
    if let Ok(mut t) = table.write() {
        t.entry(route.to_string())
            .or_default()
            .insert(key, made.clone());
    }
    made
}

/// The outermost layer of every route: turns any error response into
/// problem+json, then counts the request and times it by route and status.
/// One middleware rather than two, since each costs a boxed future.
async fn edge(request: Request<Body>, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let method = request.method().clone();
    let start = Instant::now();
    let response = problem::as_problem(next.run(request).await);
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    let m = route_metrics(route, &method, response.status());
    m.requests.increment(1);
    m.latency.record(start.elapsed().as_secs_f64());
    response
}

/// The whole service as a router.
pub fn app(state: Arc<AppState>, config: &Config) -> Router {
    Router::new()
        .merge(page::router())
        .merge(api::router())
        .merge(health::router())
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(middleware::from_fn(edge))
                // A panic becomes a 500, which `edge` words without detail.
                .layer(tower_http::catch_panic::CatchPanicLayer::new())
                .layer(TraceLayer::new_for_http())
                .layer(TimeoutLayer::with_status_code(
                    StatusCode::REQUEST_TIMEOUT,
                    config.request_timeout,
                ))
                .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
                .layer(tower::limit::ConcurrencyLimitLayer::new(
                    config.max_concurrency,
                )),
        )
}

/// Builds the generator a config asks for, on the system clock. Not the
/// cached clock: a request costs microseconds, so reading the real clock
/// (about 30 ns) is free here, every ID's time is exact, and no refresh
/// thread competes with the server for the CPU.
pub fn generator(config: &Config) -> Result<ServerGenerator, snowflake::Error> {
    generator_on(config, Arc::new(SystemClock))
}

/// Builds the generator a config asks for, on the given clock.
pub fn generator_on(
    config: &Config,
    clock: Arc<dyn Clock>,
) -> Result<ServerGenerator, snowflake::Error> {
    let node: Vec<(&str, u64)> = config.node.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let builder = Generator::builder(config.layout.clone())
        .node(&node)
        .clock(clock);
    match &config.state_file {
        Some(path) => builder.store(FileMarkStore::new(path)).build(),
        None => builder.build(),
    }
}

/// Why the service stopped with an error.
#[derive(Debug)]
pub enum ServeError {
    /// The configuration or the generator's start was refused.
    Generator(snowflake::Error),
    /// The listener could not be bound or failed.
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Generator(err) => err.fmt(f),
            ServeError::Io(err) => write!(f, "cannot serve: {err}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Runs the service until SIGTERM or Ctrl-C; requests in flight finish, then
/// the generator's mark is flushed to the state file.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(ServeError::Io)?;
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    let (source, clock): (Source, Arc<dyn Clock>) = match &config.cluster {
        None => {
            let generator = Arc::new(generator(&config).map_err(ServeError::Generator)?);
            if config.state_file.is_none() {
                tracing::warn!(
                    "no --state-file: a restart with the clock set back could repeat IDs; \
                     give one in production"
                );
            }
            let clock = Arc::clone(generator.clock());
            (Source::Standalone(generator), clock)
        }
        Some(cluster) => {
            let mut cluster = cluster.clone();
            cluster.info.address = format!("http://{addr}/");
            let clock = Arc::clone(&cluster.clock);
            tracing::info!(endpoints = ?cluster.endpoints, name = %cluster.name, "joining the cluster");
            (Source::Cluster(Cluster::start(cluster)), clock)
        }
    };
    tracing::info!(%addr, layout = %config.layout, "listening on http://{addr}/");
    let state = Arc::new(AppState::with_source(
        source.clone(),
        config.layout.clone(),
        clock,
    ));
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
    let router = app(state, &config);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(ServeError::Io)?;
    upkeep.abort();
    tracing::info!("shutting down");
    match source {
        Source::Standalone(generator) => match Arc::try_unwrap(generator) {
            Ok(generator) => generator.close().map_err(ServeError::Generator)?,
            // Still shared: the mark stays a window ahead, which is safe; a
            // quick restart waits it out.
            Err(_) => tracing::warn!("the generator is still in use; its mark was not shrunk"),
        },
        Source::Cluster(cluster) => cluster.shutdown().await,
    }
    Ok(())
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

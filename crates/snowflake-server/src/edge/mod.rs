//! The outermost layer of every route, in named parts:
//!
//! - `admit`: who may ask and what they may send (the request target's
//!   length, a body declared too large, the host, the page's origin on the
//!   routes that issue IDs, CORS preflights);
//! - `limit`: the server-wide turn, the request timeout, the panic catch
//!   and the cap on a body read;
//! - `headers`: what every answer carries;
//! - `record`: the log of server errors and the request metrics.
//!
//! They run inside one tower `Service` rather than as a stack of layers:
//! each layer of a stack boxes its future or its service again on every
//! request, where this makes one allocation, its future, a request.

mod admit;
mod headers;
mod host;
mod limit;
mod record;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::Request;
use axum::response::Response;
use tokio::sync::Semaphore;
use tower::{Layer, Service};

use crate::config::Config;
use crate::problem;
use crate::state::AppState;
use crate::telemetry::{RouteMemo, UNMATCHED};
use admit::{Admission, allow_origin};
use limit::limit_body;
use record::{Label, finish};

/// What the edge needs besides the state: who may ask.
pub(crate) struct Edge {
    state: Arc<AppState>,
    /// One turn per request in flight, for the whole server. A
    /// `ConcurrencyLimitLayer` under `Router::layer` gave every route and
    /// method its own semaphore; tower's global limit waits in `poll_ready`,
    /// where no timeout sees it. Here the wait is inside the request's time.
    turns: Arc<Semaphore>,
    request_timeout: Duration,
    cors_origins: Vec<String>,
    loopback_hosts_only: bool,
    allowed_hosts: Vec<String>,
    /// The routes that use up IDs, which a foreign page must not call, as
    /// the routes declared themselves.
    issuing: Vec<String>,
}

impl Edge {
    pub(crate) fn new(state: Arc<AppState>, config: &Config, issuing: Vec<String>) -> Self {
        Edge {
            issuing,
            state,
            turns: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
            request_timeout: config.request_timeout,
            cors_origins: config.cors_origins.clone(),
            loopback_hosts_only: config.loopback_hosts_only,
            allowed_hosts: config.allowed_hosts.clone(),
        }
    }
}

/// What the edge wraps: a route of the router, answering every request.
pub(crate) trait Route:
    Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
    + Clone
    + Send
    + 'static
{
}

impl<S> Route for S where
    S: Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
        + Clone
        + Send
        + 'static
{
}

/// The edge as a tower layer, put on every route by `Router::layer`.
///
/// A layer of its own rather than `axum::middleware::from_fn`, which boxes
/// the next service anew, boxes its future and maps it twice on every
/// request, where this allocates one thing a request: its future.
#[derive(Clone)]
pub(crate) struct EdgeLayer(Arc<Edge>);

impl EdgeLayer {
    pub(crate) fn new(edge: Edge) -> Self {
        EdgeLayer(Arc::new(edge))
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = EdgeService<S>;

    fn layer(&self, route: S) -> EdgeService<S> {
        EdgeService {
            edge: Arc::new(RouteEdge {
                edge: Arc::clone(&self.0),
                memo: RouteMemo::default(),
            }),
            route,
        }
    }
}

/// One route behind the edge.
#[derive(Clone)]
pub(crate) struct EdgeService<S> {
    edge: Arc<RouteEdge>,
    route: S,
}

/// The edge as one route sees it: the shared checks and limits, and the
/// route's own metric handles. One `Arc` for both, since each request's
/// future holds a clone, and every clone is a write to a count that the
/// cores share.
struct RouteEdge {
    edge: Arc<Edge>,
    memo: RouteMemo,
}

impl<S: Route> Service<Request<Body>> for EdgeService<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // axum's routes are always ready; the wait for a turn happens in
        // the request's own time, under its timeout (see `Edge::turns`).
        self.route.poll_ready(cx)
    }

    /// Checks who asks and what they send, then calls the route, which
    /// only makes its future: the route runs when that future is polled,
    /// inside the edge's turn, timeout and panic catch. Called in place
    /// rather than on a clone of the route, which cost an allocation.
    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let start = Instant::now();
        let route_edge = Arc::clone(&self.edge);
        let matched = request.extensions().get::<MatchedPath>();
        let method = request.method().clone();
        let path = matched.map_or(UNMATCHED, MatchedPath::as_str);
        // The route's name for `finish`: the memo's copy once the route has
        // answered 200, so the request's own (an `Arc`, whose count the
        // cores share) is cloned only until then.
        let label = if route_edge.memo.holds(path) {
            Label::Remembered
        } else {
            matched.cloned().map_or(Label::Unmatched, Label::Matched)
        };
        match route_edge.edge.admit(&request, path) {
            Admission::Answered(response) => {
                Box::pin(async move { Ok(finish(&route_edge, &label, &method, response, start)) })
            }
            Admission::Served(cors) => {
                let route = self.route.call(limit_body(request));
                Box::pin(async move {
                    let served = route_edge.edge.run(route, start).await;
                    let mut response = problem::as_problem(served);
                    if let Some(origin) = cors {
                        allow_origin(response.headers_mut(), origin);
                    }
                    Ok(finish(&route_edge, &label, &method, response, start))
                })
            }
        }
    }
}

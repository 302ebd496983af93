//! The whole service as one router: every area's routes and the layers
//! around them.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use tower::ServiceBuilder;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::config::Config;
use crate::edge::Edge;
use crate::state::AppState;
use crate::{api, edge, health, openapi, page};

/// Request bodies are small or absent; anything larger is refused with 413.
const BODY_LIMIT: usize = 64 * 1024;

/// The whole service as a router.
pub fn app(state: Arc<AppState>, config: &Config) -> Router {
    let edge = Arc::new(Edge::new(Arc::clone(&state), config));
    Router::new()
        .merge(page::router())
        .merge(api::router())
        .merge(openapi::router())
        .merge(health::router())
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(middleware::from_fn_with_state(edge, edge::edge))
                // A panic becomes a 500, which `edge` words without detail.
                .layer(tower_http::catch_panic::CatchPanicLayer::new())
                .layer(TraceLayer::new_for_http())
                // Waiting for a turn counts against the request's time.
                .layer(TimeoutLayer::with_status_code(
                    StatusCode::REQUEST_TIMEOUT,
                    config.request_timeout,
                ))
                .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
                // `Router::layer` wraps each route (and each method) on its
                // own: a plain `ConcurrencyLimitLayer` gave every one its own
                // semaphore. The global layer shares one across them all.
                .layer(GlobalConcurrencyLimitLayer::new(
                    config.max_concurrency.max(1),
                )),
        )
}

//! The whole service as one router: every area's routes and the layers
//! around them.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use tower::ServiceBuilder;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

use crate::config::Config;
use crate::edge::Edge;
use crate::issue::Limits;
use crate::state::AppState;
use crate::{api, edge, health, openapi, page};

/// Request bodies are small or absent, but for `POST /api/v1/decode`'s
/// 10,000 IDs (about 230 KB as a JSON array); anything larger is refused
/// with 413.
const BODY_LIMIT: usize = 512 * 1024;

/// The whole service as a router.
pub fn app(state: Arc<AppState>, config: &Config) -> Router {
    let edge = Arc::new(Edge::new(Arc::clone(&state), config));
    Router::new()
        .merge(page::router())
        .merge(api::router(Arc::new(Limits::new(config))))
        .merge(openapi::router())
        .merge(health::router())
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                // The edge also holds the server-wide concurrency limit and
                // the request timeout.
                .layer(middleware::from_fn_with_state(edge, edge::edge))
                // A panic becomes a 500, which `edge` words without detail.
                .layer(tower_http::catch_panic::CatchPanicLayer::new())
                .layer(TraceLayer::new_for_http())
                .layer(RequestBodyLimitLayer::new(BODY_LIMIT)),
        )
}

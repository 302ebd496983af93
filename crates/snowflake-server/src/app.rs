//! The whole service as one router: every area's routes and the layers
//! around them.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;
use tracing::Level;

use crate::config::Config;
use crate::edge::Edge;
use crate::issue::Limits;
use crate::state::AppState;
use crate::{api, edge, health, openapi, page};

/// The whole service as a router.
///
/// Requests are traced (tower-http's `TraceLayer`: a span, and a line when
/// each starts and ends) only if the logger set up before this call would
/// print those lines, as with `RUST_LOG=tower_http=debug`: at the default
/// level they are dropped anyway, and the layer cost the one-ID route about
/// a twentieth of its throughput. Answers of 500 and above are logged by
/// the edge whatever the level.
pub fn app(state: Arc<AppState>, config: &Config) -> Router {
    let edge = Arc::new(Edge::new(Arc::clone(&state), config));
    let routes = Router::new()
        .merge(page::router())
        .merge(api::router(Arc::new(Limits::new(config))))
        .merge(openapi::router())
        .merge(health::router())
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(state);
    // The edge also holds the server-wide concurrency limit, the request
    // timeout and the body limit, and turns a panic into a 500. One
    // `layer` call for all the layers: each call wraps every route in one
    // more boxed service, which costs an allocation per request.
    let edge = middleware::from_fn_with_state(edge, edge::edge);
    if tracing::enabled!(target: "tower_http::trace", Level::DEBUG) {
        routes.layer(
            ServiceBuilder::new()
                .layer(edge)
                .layer(TraceLayer::new_for_http()),
        )
    } else {
        routes.layer(edge)
    }
}

//! The whole service as one router: every area's routes and the layers
//! around them.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use tower_http::trace::TraceLayer;
use tracing::Level;

use crate::config::Config;
use crate::edge::{Edge, EdgeLayer};
use crate::page;
use crate::routes;
use crate::source::IdSource;
use crate::state::AppState;

/// The whole service as a router, handing out `source`'s IDs as `config`
/// says.
///
/// Requests are traced (tower-http's `TraceLayer`: a span, and a line when
/// each starts and ends) only if the logger set up before this call would
/// print those lines, as with `RUST_LOG=tower_http=debug` (decided here,
/// once: a filter changed later does not add or remove it): at the default
/// level they would be made and dropped, a cost on every request. Answers
/// of 500 and above are logged by the edge at error level, with the trace
/// on or off.
pub fn app(source: Arc<dyn IdSource>, config: &Config) -> Router {
    router(Arc::new(AppState::new(source, config)), config)
}

/// [`app`] around a state already made.
pub(crate) fn router(state: Arc<AppState>, config: &Config) -> Router {
    let routes = routes::all();
    let issuing = routes.listed().iter().filter(|r| r.issuing);
    let issuing = issuing.map(|r| r.path.clone()).collect();
    let edge = EdgeLayer::new(Edge::new(Arc::clone(&state), config, issuing));
    let (api, _) = routes.split();
    let routes = Router::new()
        .merge(page::router())
        .merge(api)
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(state);
    // The edge also holds the server-wide concurrency limit, the request
    // timeout and the body limit, and turns a panic into a 500. The trace,
    // when on, sits inside it, so that what it logs is the route's own
    // answer.
    let routes = if tracing::enabled!(target: "tower_http::trace", Level::DEBUG) {
        // Failures are the edge's to log, once.
        routes.layer(TraceLayer::new_for_http().on_failure(()))
    } else {
        routes
    };
    routes.layer(edge)
}

/// Every path of the API (the page aside) as the router holds it, and
/// whether each was added as one that issues IDs: what a test walks to
/// find every route that uses IDs up.
#[doc(hidden)]
pub fn api_routes() -> Vec<routes::ApiRoute> {
    routes::all().listed().to_vec()
}

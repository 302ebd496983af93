//! The outermost layer of every route.

use std::time::Instant;

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::Request;
use axum::middleware::Next;
use axum::response::Response;

use crate::{problem, telemetry};

/// Turns any error response into problem+json, then counts the request and
/// times it by route and status. One middleware rather than two, since each
/// costs a boxed future.
pub(crate) async fn edge(request: Request<Body>, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let method = request.method().clone();
    let start = Instant::now();
    let response = problem::as_problem(next.run(request).await);
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    let m = telemetry::route(route, &method, response.status());
    m.requests.increment(1);
    m.latency.record(start.elapsed().as_secs_f64());
    response
}

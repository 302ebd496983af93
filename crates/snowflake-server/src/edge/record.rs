//! What every answer leaves behind: its security headers, a log line if
//! it is a server error, and the request metrics by route and status.

use std::time::Instant;

use axum::extract::MatchedPath;
use axum::http::Method;
use axum::response::Response;

use super::RouteEdge;
use super::headers::harden;
use crate::telemetry::UNMATCHED;

/// Which route a request went to, as [`finish`] names it in the metrics.
pub(super) enum Label {
    /// The route its layer's memo names.
    Remembered,
    /// The route the router matched.
    Matched(MatchedPath),
    /// No route: the fallback answered.
    Unmatched,
}

/// Adds the headers every answer carries, logs a server error, then counts
/// the request and times it by route and status.
pub(super) fn finish(
    route_edge: &RouteEdge,
    label: &Label,
    method: &Method,
    mut response: Response,
    start: Instant,
) -> Response {
    let path = match label {
        Label::Remembered => route_edge.memo.route().unwrap_or(UNMATCHED),
        Label::Matched(matched) => matched.as_str(),
        Label::Unmatched => UNMATCHED,
    };
    harden(response.headers_mut());
    let status = response.status();
    if status.is_server_error() {
        // Whether or not the trace layer is on (see `app`), the one log
        // line of a failure besides the metrics.
        tracing::error!(route = path, method = %method, status = status.as_u16(), "answered with a server error");
    }
    route_edge.edge.state.telemetry.record(
        &route_edge.memo,
        path,
        method,
        status,
        start.elapsed().as_secs_f64(),
    );
    response
}

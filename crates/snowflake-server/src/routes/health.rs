//! Liveness, readiness and metrics.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::problem::Problem;
use crate::state::AppState;

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "meta",
    responses((status = 200, description = "alive", body = crate::routes::schema::StatusSchema)))]
pub(crate) async fn healthz() -> Response {
    Json(serde_json::json!({"status": "ok"})).into_response()
}

/// The generator can issue IDs now.
#[utoipa::path(get, path = "/readyz", tag = "meta",
    responses(
        (status = 200, description = "ready", body = crate::routes::schema::StatusSchema),
        (status = 503, description = "cannot issue now", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn readyz(State(state): State<Arc<AppState>>) -> Result<Response, Problem> {
    Ok(Json(state.ready()?).into_response())
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "meta",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub(crate) async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    state.publish_metrics();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.telemetry.handle().render(),
    )
        .into_response()
}

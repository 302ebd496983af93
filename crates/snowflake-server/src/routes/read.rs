//! Reading IDs: compose one, decode one (under a layout, or under every
//! preset at once), the IDs of a time window, the presets. Parameters are
//! text until the core's parsers read them, so the API and the CLI report
//! bad input in the same words.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use snowflake::{Clock, Id, Layout, Readings};
use utoipa::IntoParams;

use super::query::{FormQuery, IdPath, LayoutQuery, Query, ReadingQuery, Time, query_set};
use crate::problem::Problem;
use crate::state::AppState;
use snowflake_io::parse_time;

/// `timestamp`: when the ID composed was made.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TimeQuery {
    /// Unix ms or RFC 3339; now when left out
    #[param(value_type = Option<Time>, inline, example = "2024-01-01T00:00:00Z")]
    timestamp: Option<String>,
}

query_set! {
    /// What compose takes: a time, a layout, and a value for each of its
    /// fields, by the field's name.
    ComposeQuery { time: TimeQuery, layout: LayoutQuery } open fields
}

query_set! {
    /// What decoding one ID takes.
    DecodeQuery { layout: ReadingQuery, form: FormQuery }
}

/// `from` and `to`: a time window, both ends in it.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct WindowQuery {
    /// Unix ms or RFC 3339
    #[param(value_type = Time, inline, example = "2024-01-01T00:00:00Z")]
    from: Option<String>,
    /// Unix ms or RFC 3339, inclusive
    #[param(value_type = Time, inline, example = "2024-01-31T23:59:59.999Z")]
    to: Option<String>,
}

impl WindowQuery {
    /// The time `name` (`from` or `to`) names, which must be given.
    fn time(name: &'static str, text: &Option<String>) -> Result<i64, Problem> {
        let text = text.as_deref().ok_or_else(|| {
            Problem::bad_request(
                name,
                format!("{name} is required: Unix milliseconds or an RFC 3339 date"),
            )
        })?;
        Ok(parse_time(name, text)?)
    }
}

query_set! {
    /// What bounds takes.
    BoundsQuery { window: WindowQuery, layout: LayoutQuery }
}

fn decoded_json(layout: &Layout, id: Id) -> Result<Response, Problem> {
    let decoded = layout.decode(id)?;
    Ok(Json(decoded).into_response())
}

/// Compose one ID from a time and field values.
#[utoipa::path(get, path = "/api/v1/compose", tag = "ids", params(ComposeQuery),
    responses(
        (status = 200, description = "the ID and its breakdown", body = crate::routes::schema::DecodedSchema),
        (status = 400, description = "bad input", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn compose(
    State(state): State<Arc<AppState>>,
    Query(query): Query<ComposeQuery>,
) -> Result<Response, Problem> {
    let layout = query.layout.layout()?;
    let timestamp = match query.time.timestamp.as_deref() {
        Some(text) if !text.trim().is_empty() => parse_time("timestamp", text)?,
        _ => state.clock().now_ms(),
    };
    let mut values = Vec::new();
    for (name, text) in &query.fields {
        // An empty input means 0, as a field left out does.
        if text.trim().is_empty() {
            continue;
        }
        values.push((name.as_str(), layout.parse_value(name, text.trim())?));
    }
    let id = layout.compose(timestamp, &values)?;
    decoded_json(&layout, id)
}

/// Decode an ID (decimal or 0x hexadecimal); `layout=all` reads it under
/// every preset and judges each reading.
#[utoipa::path(get, path = "/api/v1/decode/{id}", tag = "ids",
    params(IdPath, DecodeQuery),
    responses(
        (status = 200, description = "the breakdown; with layout=all, every preset's reading of the ID", body = crate::routes::schema::DecodeAnswerSchema),
        (status = 400, description = "bad input", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn decode(
    State(state): State<Arc<AppState>>,
    Path(IdPath { id }): Path<IdPath>,
    Query(query): Query<DecodeQuery>,
) -> Result<Response, Problem> {
    let form = query.form.form()?;
    let layout = query.layout.layout()?;
    let id = Id::parse_as(id.trim(), form)?;
    match layout {
        Some(layout) => decoded_json(&layout, id),
        None => {
            let presets = Layout::presets();
            let all = Readings::new(&presets, id, state.clock().now_ms());
            Ok(Json(all).into_response())
        }
    }
}

/// The smallest and largest ID of a time window.
#[utoipa::path(get, path = "/api/v1/bounds", tag = "ids", params(BoundsQuery),
    responses(
        (status = 200, description = "first and last ID", body = crate::routes::schema::BoundsSchema),
        (status = 400, description = "bad input", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn bounds(Query(query): Query<BoundsQuery>) -> Result<Response, Problem> {
    let layout = query.layout.layout()?;
    let from = WindowQuery::time("from", &query.window.from)?;
    let to = WindowQuery::time("to", &query.window.to)?;
    Ok(Json(layout.bounds(from, to)?).into_response())
}

/// The preset layouts.
#[utoipa::path(get, path = "/api/v1/layouts", tag = "layouts",
    responses((status = 200, description = "the presets", body = Vec<crate::routes::schema::LayoutSchema>)))]
pub(crate) async fn layouts() -> Response {
    Json(Layout::presets()).into_response()
}

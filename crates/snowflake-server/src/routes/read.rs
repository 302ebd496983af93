//! Reading IDs: compose one, decode one (under a layout, or under every
//! preset at once), the IDs of a time window, the presets. Parameters are
//! text until the core's parsers read them, so the API and the CLI report
//! bad input in the same words.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use snowflake::{Clock, Id, Layout, Readings};

use super::Routes;
use super::params::{QueryParams, layout_of, only, text_form};
use crate::problem::Problem;
use crate::state::AppState;
use snowflake_io::{all_layouts, parse_time};

/// Parameters that are not field values.
const RESERVED: [&str; 4] = ["layout", "epoch", "tick_ms", "timestamp"];

/// The routes that read IDs; none issues any.
pub(crate) fn routes() -> Routes {
    Routes::default()
        .route("/api/v1/compose", get(compose))
        .route("/api/v1/decode/{id}", get(decode))
        .route("/api/v1/bounds", get(bounds))
        .route("/api/v1/layouts", get(layouts))
}

fn decoded_json(layout: &Layout, id: Id) -> Result<Response, Problem> {
    let decoded = layout.decode(id)?;
    Ok(Json(decoded).into_response())
}

/// Compose one ID from a time and field values.
#[utoipa::path(get, path = "/api/v1/compose", tag = "ids",
    params(
        ("timestamp" = Option<String>, Query, description = "Unix ms or RFC 3339; now when left out"),
        ("layout" = Option<String>, Query, description = "preset name or custom layout such as time:41,datacenter:5,machine:5,sequence:12"),
        ("epoch" = Option<String>, Query, description = "override the layout's epoch (Unix ms or RFC 3339)"),
        ("tick_ms" = Option<String>, Query, description = "override the layout's tick"),
        ("datacenter" = Option<String>, Query, description = "a field value; every field of the layout is a parameter of its name"),
        ("machine" = Option<String>, Query, description = "a field value"),
        ("sequence" = Option<String>, Query, description = "a field value"),
    ),
    responses(
        (status = 200, description = "the ID and its breakdown", body = crate::routes::schema::DecodedSchema),
        (status = 400, description = "bad input", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn compose(
    State(state): State<Arc<AppState>>,
    QueryParams(params): QueryParams,
) -> Result<Response, Problem> {
    let layout = layout_of(&params)?;
    let timestamp = match params.get("timestamp").filter(|t| !t.trim().is_empty()) {
        Some(text) => parse_time("timestamp", text)?,
        None => state.clock().now_ms(),
    };
    let mut values = Vec::new();
    for (name, text) in &params {
        if RESERVED.contains(&name.as_str()) {
            continue;
        }
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
    params(
        ("id" = String, Path, description = "decimal or 0x hexadecimal"),
        ("layout" = Option<String>, Query, description = "preset name or custom layout; `all` for every preset at once"),
        ("epoch" = Option<String>, Query, description = "override the layout's epoch"),
        ("tick_ms" = Option<String>, Query, description = "override the layout's tick"),
        ("format" = Option<String>, Query, description = "read the ID in this text form; without it, decimal or 0x hex"),
    ),
    responses(
        (status = 200, description = "the breakdown; with layout=all, every preset's reading of the ID", body = crate::routes::schema::DecodeAnswerSchema),
        (status = 400, description = "bad input", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn decode(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    QueryParams(params): QueryParams,
) -> Result<Response, Problem> {
    only(&params, &["layout", "epoch", "tick_ms", "format"])?;
    let form = text_form(&params)?;
    let get = |name: &str| params.get(name).map(String::as_str);
    if all_layouts(get("layout").unwrap_or(""), get("epoch"), get("tick_ms"))? {
        let id = Id::parse_as(id.trim(), form)?;
        let presets = Layout::presets();
        let all = Readings::new(&presets, id, state.clock().now_ms());
        return Ok(Json(all).into_response());
    }
    let layout = layout_of(&params)?;
    decoded_json(&layout, Id::parse_as(id.trim(), form)?)
}

/// The smallest and largest ID of a time window.
#[utoipa::path(get, path = "/api/v1/bounds", tag = "ids",
    params(
        ("from" = String, Query, description = "Unix ms or RFC 3339", example = "2024-01-01T00:00:00Z"),
        ("to" = String, Query, description = "Unix ms or RFC 3339, inclusive", example = "2024-01-31T23:59:59.999Z"),
        ("layout" = Option<String>, Query, description = "preset name or custom layout"),
    ),
    responses(
        (status = 200, description = "first and last ID", body = crate::routes::schema::BoundsSchema),
        (status = 400, description = "bad input", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn bounds(QueryParams(params): QueryParams) -> Result<Response, Problem> {
    only(&params, &["from", "to", "layout", "epoch", "tick_ms"])?;
    let layout = layout_of(&params)?;
    let time = |name: &'static str| -> Result<i64, Problem> {
        let text = params.get(name).ok_or_else(|| {
            Problem::bad_request(
                name,
                format!("{name} is required: Unix milliseconds or an RFC 3339 date"),
            )
        })?;
        Ok(parse_time(name, text)?)
    };
    let bounds = layout.bounds(time("from")?, time("to")?)?;
    Ok(Json(bounds).into_response())
}

/// The preset layouts.
#[utoipa::path(get, path = "/api/v1/layouts", tag = "layouts",
    responses((status = 200, description = "the presets", body = Vec<crate::routes::schema::LayoutSchema>)))]
pub async fn layouts() -> Response {
    Json(Layout::presets()).into_response()
}

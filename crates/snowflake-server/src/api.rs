//! The JSON API under `/api/v1`. Parameters are text until the core's parsers
//! read them, so the API and the CLI report bad input in the same words.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use snowflake::{Clock, Id, Layout, Readings, TextForm};

use crate::input::{all_layouts, parse_time};
use crate::issue::Limits;
use crate::params::{Params, QueryParams, layout_of, only, text_form};
use crate::problem::Problem;
use crate::state::AppState;

/// The most IDs one request may ask for.
pub const MAX_COUNT: u64 = 100_000;

/// Parameters that are not field values.
const RESERVED: [&str; 4] = ["layout", "epoch", "tick_ms", "timestamp"];

/// The API's routes; `limits` bound what one request for IDs may take.
pub fn router(limits: Arc<Limits>) -> Router<Arc<AppState>> {
    // The limits ride in the handler, not in request extensions: no
    // allocation per request on the one-ID path.
    let bulk = crate::bulk_api::routes(Arc::clone(&limits));
    let issue = move |State(state): State<Arc<AppState>>, plain: WantsPlain, query: QueryParams| {
        ids(state, &limits, plain, query)
    };
    Router::new()
        .route("/api/v1/compose", get(compose))
        .route("/api/v1/decode/{id}", get(decode))
        .route("/api/v1/bounds", get(bounds))
        .route("/api/v1/layouts", get(layouts))
        .route("/api/v1/ids", get(issue.clone()).post(issue).head(no_head))
        .merge(bulk)
}

/// Whether a request for IDs asks for one per line (`Accept: text/plain`
/// without JSON). Read where the header lies: the `HeaderMap` extractor
/// would copy every header of every request to look at one.
pub struct WantsPlain(bool);

impl<S: Send + Sync> FromRequestParts<S> for WantsPlain {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let accept = parts.headers.get(header::ACCEPT);
        Ok(WantsPlain(
            accept
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("text/plain") && !v.contains("application/json")),
        ))
    }
}

/// `HEAD` would run `GET` and drop the body: IDs issued and thrown away. It
/// is refused instead, naming the methods that do issue.
async fn no_head() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, HeaderValue::from_static("GET,POST"))],
    )
        .into_response()
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
        (status = 200, description = "the ID and its breakdown", body = crate::schema::DecodedSchema),
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
        ("format" = Option<String>, Query, description = "read the ID in this text form: decimal, hex, base32, base62, base58; without it, decimal or 0x hex"),
    ),
    responses(
        (status = 200, description = "the breakdown; with layout=all, every preset's reading of the ID", body = crate::schema::DecodeAnswerSchema),
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
        (status = 200, description = "first and last ID", body = crate::schema::BoundsSchema),
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
    responses((status = 200, description = "the presets", body = Vec<crate::schema::LayoutSchema>)))]
pub async fn layouts() -> Response {
    Json(Layout::presets()).into_response()
}

/// Fresh IDs from this server's generator.
#[utoipa::path(method(get, post), path = "/api/v1/ids", tag = "ids",
    params(
        ("count" = Option<u64>, Query, description = "1 to 100000, default 1"),
        ("format" = Option<String>, Query, description = "write the IDs in this text form: decimal (the default), hex, base32, base62, base58"),
    ),
    responses(
        (status = 200, description = "fresh IDs, as strings in the text form asked for (decimal by default); with Accept: text/plain one per line", body = crate::schema::IdsSchema),
        (status = 400, description = "bad count", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "a page from an origin the operator does not allow", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "the generator cannot issue now", body = Problem, content_type = "application/problem+json"),
    ))]
pub fn ids(
    state: Arc<AppState>,
    limits: &Arc<Limits>,
    WantsPlain(plain): WantsPlain,
    QueryParams(params): QueryParams,
) -> impl Future<Output = Result<Response, Problem>> + Send + use<> {
    // Not an `async fn`: what the request asks for is read first, so that
    // the future holds the limits only when it streams. Requests that fit
    // in one time unit, nearly all, are answered without touching the
    // limits' shared count, which two cores would otherwise pass back and
    // forth each time. (A doc comment here would become the operation's
    // description in the OpenAPI document.)
    let asked = asked_ids(&params);
    let streamed = match &asked {
        Ok((count, _)) if state.streams(*count) => Some(Arc::clone(limits)),
        _ => None,
    };
    async move {
        let (count, form) = asked?;
        let body = match streamed {
            None => state.issue_now(count, plain, form)?,
            Some(limits) => state.issue_streamed(count, plain, form, &limits).await?,
        };
        let content_type = if plain {
            "text/plain; charset=utf-8"
        } else {
            "application/json"
        };
        Ok((
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            body,
        )
            .into_response())
    }
}

/// How many IDs a request asks for, and in which text form.
fn asked_ids(params: &Params) -> Result<(u64, TextForm), Problem> {
    only(params, &["count", "format"])?;
    let form = text_form(params)?.unwrap_or(TextForm::Decimal);
    let count = match params.get("count") {
        None => 1,
        Some(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .ok_or_else(|| {
                Problem::bad_request(
                    "count",
                    format!("count {text} is not allowed; a count is 1 to {MAX_COUNT}"),
                )
            })?,
    };
    Ok((count, form))
}

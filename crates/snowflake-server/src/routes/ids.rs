//! `/api/v1/ids`: fresh IDs from this node's generator, as JSON or one per
//! line, in any text form; the one route family that uses IDs up, and so
//! declared issuing where it is defined (see [`Routes::issuing`]).

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use snowflake::TextForm;

use super::Routes;
use super::params::{Params, QueryParams, only, text_form};
use crate::issue::{Framing, Limits};
use crate::problem::{self, Problem};
use crate::state::AppState;

/// The most IDs one request may ask for.
pub const MAX_COUNT: u64 = 100_000;

/// The IDs route; `limits` bound what one request for IDs may take.
pub(crate) fn routes(limits: Arc<Limits>) -> Routes {
    // The limits ride in the handler, not in request extensions: no
    // allocation per request on the one-ID path.
    let issue = move |State(state): State<Arc<AppState>>, plain: WantsPlain, query: QueryParams| {
        ids(state, &limits, plain, query)
    };
    Routes::default().issuing("/api/v1/ids", get(issue.clone()).post(issue).head(no_head))
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

/// Fresh IDs from this server's generator.
#[utoipa::path(method(get, post), path = "/api/v1/ids", tag = "ids",
    params(
        ("count" = Option<u64>, Query, description = "1 to 100000, default 1"),
        ("format" = Option<String>, Query, description = "write the IDs in this text form; decimal by default"),
        ("masked" = Option<bool>, Query, description = "true: each ID through the service's keyed permutation (issue 21), which hides its time, node and order from whoever lacks the key; the service must have been given a key"),
    ),
    responses(
        (status = 200, description = "fresh IDs, as strings in the text form asked for (decimal by default); with Accept: text/plain one per line", body = crate::routes::schema::IdsSchema),
        (status = 400, description = "bad count, form or masked, or masked asked of a service that has no key", body = Problem, content_type = "application/problem+json"),
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
    let asked = asked_ids(&params, plain, state.masker().is_some());
    let streamed = match &asked {
        Ok((count, _)) if state.streams(*count) => Some(Arc::clone(limits)),
        _ => None,
    };
    async move {
        let (count, framing) = asked?;
        let body = match streamed {
            None => state.issue_now(count, framing)?,
            Some(limits) => state.issue_streamed(count, framing, &limits).await?,
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

/// How many IDs a request asks for, and how they are written; `can_mask`
/// says whether the service has a key to mask them with.
fn asked_ids(params: &Params, plain: bool, can_mask: bool) -> Result<(u64, Framing), Problem> {
    only(params, &["count", "format", "masked"])?;
    let form = text_form(params)?.unwrap_or(TextForm::Decimal);
    let masked = match params.get("masked").map(|m| m.trim()) {
        None | Some("" | "false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(Problem::bad_request(
                "masked",
                format!(
                    "masked {} is not allowed; masked is true or false",
                    problem::quoted(other)
                ),
            ));
        }
    };
    if masked && !can_mask {
        return Err(Problem::bad_request(
            "masked",
            "this service masks no IDs: its operator gives it a key with --mask-key-file",
        ));
    }
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
    Ok((
        count,
        Framing {
            plain,
            form,
            masked,
        },
    ))
}

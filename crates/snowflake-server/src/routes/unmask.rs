//! `/api/v1/unmask/{id}`: the ID behind a masked one, with its breakdown.
//!
//! Off unless the operator turns it on (`Config::allow_unmask`): it is an
//! oracle that gives anyone back what masking hides (time, node, volume),
//! so a service whose masked IDs are public must not answer it to the
//! public. It is meant for a service that only trusted callers reach.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use snowflake::Id;

use super::Routes;
use super::params::{QueryParams, only, text_form};
use crate::problem::Problem;
use crate::state::AppState;

/// The route; `allowed` is the operator's word that it may answer.
pub(crate) fn routes(allowed: bool) -> Routes {
    Routes::default().route(
        "/api/v1/unmask/{id}",
        get(
            move |state: State<Arc<AppState>>, id: Path<String>, query: QueryParams| {
                unmask(allowed, state, id, query)
            },
        ),
    )
}

/// The ID behind a masked ID (decimal, 0x hexadecimal, or in `format`), and
/// its breakdown; off unless the operator turned it on.
#[utoipa::path(get, path = "/api/v1/unmask/{id}", tag = "ids",
    params(
        ("id" = String, Path, description = "a masked ID: decimal or 0x hexadecimal, or in format"),
        ("format" = Option<String>, Query, description = "read the masked ID in this text form"),
    ),
    responses(
        (status = 200, description = "the breakdown of the ID behind the masked one", body = crate::routes::schema::DecodedSchema),
        (status = 400, description = "not an ID of this service's layout", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "unmasking over HTTP is off (the default), or the service has no key", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn unmask(
    allowed: bool,
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    QueryParams(params): QueryParams,
) -> Result<Response, Problem> {
    let refused = |detail: &str| Problem::new(StatusCode::FORBIDDEN, "unmask-off", detail);
    if !allowed {
        return Err(refused(
            "unmasking over HTTP is off: it would give anyone back what masking hides; \
             its operator can turn it on for trusted callers with --allow-unmask",
        ));
    }
    let Some(masker) = state.masker() else {
        return Err(refused(
            "this service masks no IDs: its operator gives it a key with --mask-key-file",
        ));
    };
    only(&params, &["format"])?;
    let form = text_form(&params)?;
    let masked = Id::parse_as(id.trim(), form)?;
    let id = masker.unmask(masked)?;
    let decoded = masker.layout().decode(id)?;
    Ok(Json(decoded).into_response())
}

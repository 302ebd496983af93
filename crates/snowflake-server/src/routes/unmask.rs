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
use snowflake::Id;

use super::query::{FormQuery, IdPath, Query};
use crate::problem::Problem;
use crate::state::AppState;

/// The ID behind a masked ID (decimal, 0x hexadecimal, or in `format`), and
/// its breakdown; off unless the operator turned it on.
#[utoipa::path(get, path = "/api/v1/unmask/{id}", tag = "ids",
    params(IdPath, FormQuery),
    responses(
        (status = 200, description = "the breakdown of the ID behind the masked one", body = crate::routes::schema::DecodedSchema),
        (status = 400, description = "not an ID of this service's layout", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "unmasking over HTTP is off (the default), or the service has no key", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn unmask(
    State(state): State<Arc<AppState>>,
    Path(IdPath { id }): Path<IdPath>,
    Query(query): Query<FormQuery>,
) -> Result<Response, Problem> {
    let refused = |detail: &str| Problem::new(StatusCode::FORBIDDEN, "unmask-off", detail);
    if !state.allow_unmask {
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
    let form = query.form()?;
    let masked = Id::parse_as(id.trim(), form)?;
    let id = masker.unmask(masked)?;
    let decoded = masker.layout().decode(id)?;
    Ok(Json(decoded).into_response())
}

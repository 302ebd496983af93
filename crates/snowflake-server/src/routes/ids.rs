//! `/api/v1/ids`: fresh IDs from this node's generator, as JSON or one per
//! line, in any text form; the one route family that uses IDs up, and so
//! added as issuing (see `Routes::issuing`). What a request asks for is
//! read here; the [`Issuer`](crate::issue::Issuer) hands the IDs out.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use snowflake::TextForm;
use utoipa::IntoParams;
use utoipa::openapi::{KnownFormat, ObjectBuilder, SchemaFormat, Type};

use super::accept::{Negotiated, offers, uncached};
use super::query::{FormName, Query, default_form, param_type, query_set, text_form};
use crate::body::{IdsFormat, IdsMedia};
use crate::problem::{self, Problem};
use crate::state::AppState;

/// The most IDs one request may ask for.
pub const MAX_COUNT: u64 = 100_000;

offers!(IdsMedia {
    "application/json" => IdsMedia::Json,
    "application/json; charset=utf-8" => IdsMedia::Json,
    "text/plain; charset=utf-8" => IdsMedia::Lines,
    "text/plain" => IdsMedia::Lines,
});

/// What a request for IDs may say besides `Accept`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct IdsQuery {
    /// 1 to 100000, default 1
    #[param(value_type = Option<Count>, inline, example = 3)]
    count: Option<String>,
    /// write the IDs in this text form; decimal by default
    #[param(value_type = Option<FormName>, inline, example = default_form)]
    format: Option<String>,
    /// true: each ID through the service's keyed permutation (issue 21),
    /// which hides its time, node and order from whoever lacks the key; the
    /// service must have been given a key
    #[param(value_type = Option<bool>)]
    masked: Option<String>,
}

query_set!(@single IdsQuery);

param_type! {
    /// How many IDs: 1 to [`MAX_COUNT`].
    Count = ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(1))
        .maximum(Some(MAX_COUNT))
        .build()
}

impl IdsQuery {
    /// How many IDs the request asks for, and how they are written;
    /// `can_mask` says whether the service has a key to mask them with.
    fn asked(&self, media: IdsMedia, can_mask: bool) -> Result<(u64, IdsFormat), Problem> {
        let form = text_form(&self.format)?.unwrap_or(TextForm::Decimal);
        let masked = self.masked(can_mask)?;
        let count = self.count()?;
        Ok((
            count,
            IdsFormat {
                media,
                form,
                masked,
            },
        ))
    }

    fn count(&self) -> Result<u64, Problem> {
        let Some(text) = &self.count else {
            return Ok(1);
        };
        text.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .ok_or_else(|| {
                Problem::bad_request(
                    "count",
                    format!("count {text} is not allowed; a count is 1 to {MAX_COUNT}"),
                )
            })
    }

    fn masked(&self, can_mask: bool) -> Result<bool, Problem> {
        let masked = match self.masked.as_deref().map(str::trim) {
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
        Ok(masked)
    }
}

/// Fresh IDs from this server's generator.
#[utoipa::path(method(get, post), path = "/api/v1/ids", tag = "ids", params(IdsQuery),
    responses(
        (status = 200, description = "fresh IDs, as strings in the text form asked for (decimal by default); with Accept: text/plain one per line", body = crate::routes::schema::IdsSchema),
        (status = 400, description = "bad count, form or masked, or masked asked of a service that has no key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "a page from an origin the operator does not allow", body = Problem, content_type = "application/problem+json"),
        (status = 406, description = "an Accept header that takes neither JSON nor text/plain", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "the generator cannot issue now", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn ids(
    State(state): State<Arc<AppState>>,
    Negotiated(media): Negotiated<IdsMedia>,
    Query(query): Query<IdsQuery>,
) -> Result<Response, Problem> {
    let (count, format) = query.asked(media, state.masker().is_some())?;
    let body = state.issuer.issue(count, format).await?;
    Ok(uncached(media, body))
}

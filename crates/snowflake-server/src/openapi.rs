//! The OpenAPI document, generated from the handlers' annotations, and the
//! route that serves it.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use utoipa::OpenApi;

use crate::problem::Problem;
use crate::schema::{
    BadRecordSchema, BoundsSchema, BulkItemSchema, DecodeAnswerSchema, DecodedSchema, IdsSchema,
    LayoutSchema, ReadingSchema, ReadingsSchema, SegmentSchema, StatusSchema, TextSchema,
};
use crate::state::AppState;

pub fn router() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/openapi.json", get(openapi))
}

/// This API's OpenAPI 3 description.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "meta",
    responses((status = 200, description = "OpenAPI 3 document")))]
pub async fn openapi() -> Response {
    Json(document()).into_response()
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "snowflake",
        description = "Compose, decode and issue Snowflake IDs."
    ),
    paths(
        crate::api::compose,
        crate::api::decode,
        crate::bulk_api::decode_many,
        crate::api::bounds,
        crate::api::layouts,
        crate::api::ids,
        openapi,
        crate::health::healthz,
        crate::health::readyz,
        crate::health::metrics,
    ),
    components(schemas(
        Problem,
        DecodedSchema,
        SegmentSchema,
        TextSchema,
        BadRecordSchema,
        BulkItemSchema,
        ReadingSchema,
        ReadingsSchema,
        DecodeAnswerSchema,
        BoundsSchema,
        LayoutSchema,
        IdsSchema,
        StatusSchema
    ))
)]
struct ApiDoc;

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

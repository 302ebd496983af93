//! The OpenAPI document, made from the routes as they are added to the
//! router (see `Routes`), and the route that serves it.

use std::sync::LazyLock;

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use utoipa::OpenApi;

use crate::problem::Problem;

/// What the document says besides its routes.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "snowflake",
        description = "Compose, decode and issue Snowflake IDs."
    ),
    components(schemas(Problem))
)]
struct ApiDoc;

/// The document before any route is added.
pub(crate) fn base() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// This API's OpenAPI 3 description.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "meta",
    responses((status = 200, description = "OpenAPI 3 document")))]
pub(crate) async fn openapi() -> Response {
    Json(document()).into_response()
}

/// The document, as JSON; made once.
pub fn document() -> &'static Value {
    static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
        let (_, document) = super::all().split();
        serde_json::to_value(document).unwrap_or(Value::Null)
    });
    &DOCUMENT
}

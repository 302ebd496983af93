//! The OpenAPI document, generated from the handlers' annotations, and the
//! route that serves it.

use std::sync::LazyLock;

use axum::Json;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use snowflake::{Layout, TextForm};
use utoipa::OpenApi;

use super::Routes;
use super::ids::MAX_COUNT;
use crate::problem::Problem;
use crate::routes::schema::{
    BadRecordSchema, BoundsSchema, BulkItemSchema, DecodeAnswerSchema, DecodedSchema, IdsSchema,
    LayoutSchema, ReadingSchema, ReadingsSchema, SegmentSchema, StatusSchema, TextSchema,
};

pub(crate) fn routes() -> Routes {
    Routes::default().route("/api/v1/openapi.json", get(openapi))
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
        super::read::compose,
        super::read::decode,
        super::decode_many::decode_many,
        super::read::bounds,
        super::read::layouts,
        super::ids::ids,
        super::unmask::unmask,
        openapi,
        super::health::healthz,
        super::health::readyz,
        super::health::metrics,
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

/// The document: the handlers' annotations, with each parameter's values
/// stated as a pattern or a list and an example, so that a client (or a
/// fuzzer) knows what reaches the handler. Made once.
pub fn document() -> &'static Value {
    static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
        let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or(Value::Null);
        if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
            for (path, operations) in paths.iter_mut() {
                let Some(operations) = operations.as_object_mut() else {
                    continue;
                };
                for operation in operations.values_mut() {
                    if let Some(params) = operation
                        .get_mut("parameters")
                        .and_then(Value::as_array_mut)
                    {
                        for param in params {
                            constrain(param, path);
                        }
                    }
                }
            }
        }
        doc
    });
    &DOCUMENT
}

/// Unix milliseconds from 2011 to 2033, or an RFC 3339 time in UTC from
/// 2010 to 2079: times the default layout holds.
const TIME: &str = "^1[3-9][0-9]{11}$|^20([1-7][0-9])-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{3})?Z$";

/// States what a parameter of this name accepts. The lists that the core
/// holds (the presets, the text forms) come from it.
fn constrain(param: &mut Value, path: &str) {
    let Some(name) = param.get("name").and_then(Value::as_str) else {
        return;
    };
    let presets = Layout::PRESETS.join("|");
    let (rule, example): (Value, Value) = match name {
        "layout" => {
            let all = if path.starts_with("/api/v1/decode/") {
                "|all"
            } else {
                ""
            };
            let pattern = format!(
                "^({presets}{all})$|^time:4[01](,[a-z]{{1,10}}:[1-5]){{0,2}},sequence:1[0-2]$"
            );
            (json!({ "pattern": pattern }), json!(Layout::PRESETS[0]))
        }
        "format" => {
            let forms: Vec<&str> = TextForm::ALL.iter().map(|f| f.name()).collect();
            (json!({ "enum": forms }), json!(TextForm::ALL[0].name()))
        }
        "id" => (
            json!({ "pattern": "^[1-9][0-9]{0,17}$|^0x[0-9a-f]{1,15}$" }),
            json!("1541815603606036480"),
        ),
        "timestamp" | "from" | "to" => (json!({ "pattern": TIME }), json!("2024-01-01T00:00:00Z")),
        "epoch" => (
            json!({ "pattern": "^1[0-2][0-9]{11}$" }),
            json!("1288834974657"),
        ),
        "tick_ms" => (json!({ "pattern": "^[1-9][0-9]{0,3}$" }), json!("1")),
        "count" => (json!({ "minimum": 1, "maximum": MAX_COUNT }), json!(3)),
        "datacenter" | "machine" => (
            json!({ "pattern": "^([0-9]|[12][0-9]|3[01])$" }),
            json!("1"),
        ),
        "sequence" => (json!({ "pattern": "^[0-9]{1,3}$" }), json!("0")),
        _ => return,
    };
    if let (Some(schema), Some(rule)) = (
        param.get_mut("schema").and_then(Value::as_object_mut),
        rule.as_object(),
    ) {
        schema.extend(rule.clone());
    }
    if let Some(param) = param.as_object_mut() {
        param.entry("example").or_insert(example);
    }
}

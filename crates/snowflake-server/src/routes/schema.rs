//! The shapes of the API's JSON bodies, for the OpenAPI document. They
//! describe what the core's `serde` impls write (the core has no utoipa of
//! its own); nothing serialises them. Where the core holds the list (the
//! text forms), the schema is made from it; the rest are held to what the
//! core writes by `tests/api/document.rs`, which checks the core's values
//! and the routes' answers against them property by property. A value the
//! core writes as null is still written, so it is required (and nullable).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;
use snowflake::{Id, TextForm};
use utoipa::openapi::{ObjectBuilder, RefOr, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// The ID the examples show.
const EXAMPLE_ID: u64 = 4194439168;

/// One labelled run of bits.
#[derive(Serialize, ToSchema)]
#[schema(as = Segment)]
pub struct SegmentSchema {
    /// `sign`, `timestamp` or a field's name.
    name: String,
    bits: u8,
    /// For the timestamp, time units since the epoch.
    value: u64,
    /// `bits` characters of 0 and 1.
    binary: String,
}

/// An ID and its breakdown; the same object as `snowflake decode --json`.
#[derive(Serialize, ToSchema)]
#[schema(as = Decoded)]
pub struct DecodedSchema {
    /// The ID as a decimal string (JavaScript numbers lose precision above 2^53).
    #[schema(example = json!(EXAMPLE_ID.to_string()))]
    id: String,
    #[schema(example = "twitter")]
    layout: String,
    #[schema(example = 1288834975657i64)]
    timestamp_ms: i64,
    #[schema(example = "2010-11-04T01:42:55.657Z")]
    time: String,
    /// Every field but time, by name, the sequence included.
    fields: BTreeMap<String, u64>,
    /// The 64 bits, most significant first.
    binary: String,
    segments: Vec<SegmentSchema>,
    text: TextSchema,
}

/// The ID in each of the core's text forms but decimal (`id` itself):
/// made from `TextForm::ENCODED`, so a form added to the core is here.
/// (`Serialize` only for the untagged enums below that hold it.)
#[derive(Serialize)]
pub struct TextSchema;

impl PartialSchema for TextSchema {
    fn schema() -> RefOr<Schema> {
        let id = Id::new(EXAMPLE_ID);
        let fixed: Vec<&str> = TextForm::ENCODED
            .iter()
            .filter(|form| form.fixed_width().is_some())
            .map(|form| form.name())
            .collect();
        let mut object = ObjectBuilder::new().schema_type(Type::Object).description(Some(format!(
            "The ID in its other text forms; {} are fixed-width, so their text sorts as the IDs do.",
            fixed.join(" and ")
        )));
        for &form in TextForm::ENCODED {
            let width = match form.fixed_width() {
                Some(width) => format!("always {width} characters"),
                None => "no fixed width".to_string(),
            };
            let property = ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(format!("digits {}, {width}", form.alphabet())))
                .examples([id.to_text(form)]);
            object = object.property(form.name(), property).required(form.name());
        }
        object.into()
    }
}

impl ToSchema for TextSchema {
    fn name() -> Cow<'static, str> {
        "TextForms".into()
    }
}

/// One preset's reading of an ID.
#[derive(Serialize, ToSchema)]
#[schema(as = Reading)]
pub struct ReadingSchema {
    #[schema(example = "discord")]
    layout: String,
    /// Who uses the preset.
    #[schema(required = true, example = "Discord")]
    platform: Option<String>,
    /// When the platform's IDs began; earlier times are implausible.
    #[schema(required = true, example = "2015-01-01T00:00:00.000Z")]
    launched: Option<String>,
    /// `impossible` (the layout cannot decode the ID), `implausible` (a time
    /// in the future, or before the platform began) or `possible`.
    #[schema(example = "possible")]
    verdict: String,
    /// Why it is impossible or implausible; null when possible.
    #[schema(required = true)]
    reason: Option<String>,
    /// The breakdown; null when impossible.
    #[schema(required = true)]
    decoded: Option<DecodedSchema>,
}

/// An ID read under every preset (`layout=all`).
#[derive(Serialize, ToSchema)]
#[schema(as = Readings)]
pub struct ReadingsSchema {
    #[schema(example = "175928847299117063")]
    id: String,
    /// The time the readings were judged at.
    now_ms: i64,
    now: String,
    readings: Vec<ReadingSchema>,
}

/// An ID of a bulk request that could not be decoded.
#[derive(Serialize, ToSchema)]
#[schema(as = BadRecord)]
pub struct BadRecordSchema {
    /// The 1-based line of a text body, or position in a JSON array.
    line: u64,
    /// The text as sent.
    input: String,
    /// What is wrong with it.
    #[schema(
        example = "id \"12ab\" is not decimal: 'a' is not allowed; a decimal ID is 1 to 20 digits 0-9, from 0 to 18446744073709551615"
    )]
    error: String,
    /// `id`, or the parameter at fault.
    #[schema(required = true)]
    field: Option<String>,
}

/// One record of a bulk decode: a breakdown, or the problem with that ID.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = BulkItem)]
// Only its schema is used: the records are written by `snowflake_io`.
#[allow(dead_code)]
pub enum BulkItemSchema {
    /// The ID decoded.
    Decoded(DecodedSchema),
    /// The ID could not be decoded.
    Bad(BadRecordSchema),
}

/// The IDs a layout can produce in a window.
#[derive(Serialize, ToSchema)]
#[schema(as = Bounds)]
pub struct BoundsSchema {
    layout: String,
    from_ms: i64,
    from: String,
    to_ms: i64,
    to: String,
    /// Smallest ID, decimal string.
    first: String,
    /// Largest ID, decimal string.
    last: String,
}

/// A layout: widths, epoch, capacity.
#[derive(Serialize, ToSchema)]
#[schema(as = Layout)]
pub struct LayoutSchema {
    name: String,
    spec: String,
    epoch_ms: i64,
    epoch: String,
    tick_ms: u64,
    sign_bit: bool,
    /// How many bits the widths add up to (64 at most); the bits above are 0.
    #[schema(example = 63)]
    bits: u8,
    /// The largest ID, a decimal string.
    #[schema(example = "9223372036854775807")]
    max_id: String,
    /// Whether every ID is at most 2^53 − 1, so JavaScript holds it as a number.
    js_safe: bool,
    time_bits: u8,
    /// `[name, bits]` pairs, most significant first.
    fields: Vec<(String, u8)>,
    #[schema(required = true)]
    sequence: Option<String>,
    last_ms: i64,
    last: String,
    #[schema(required = true)]
    ids_per_ms: Option<f64>,
    nodes: u64,
}

/// Fresh IDs.
#[derive(Serialize, ToSchema)]
#[schema(as = Ids)]
pub struct IdsSchema {
    layout: String,
    /// Decimal strings, strictly increasing.
    ids: Vec<String>,
}

/// Health and readiness.
#[derive(Serialize, ToSchema)]
#[schema(as = Status)]
pub struct StatusSchema {
    status: String,
}

/// What `GET /api/v1/decode/{id}` answers: one breakdown, or with
/// `layout=all` every preset's reading of the ID.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = DecodeAnswer)]
#[allow(dead_code)] // Never built: only its schema is used.
pub enum DecodeAnswerSchema {
    /// One layout's breakdown.
    Decoded(DecodedSchema),
    /// Every preset's reading (`layout=all`).
    Readings(ReadingsSchema),
}

//! `POST /api/v1/decode`: up to [`MAX_BULK`] IDs in one request, as a JSON
//! array of strings or a text body of IDs separated by whitespace, answered
//! as JSON, NDJSON or CSV by `Accept`. The records are the ones `snowflake
//! decode -` writes, from the same code in `snowflake_io`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use snowflake::{Id, Layout, TextForm};
use tokio::time::Instant;

use super::Routes;
use super::params::{QueryParams, layout_of, only, text_form};
use crate::chunks::{self, ChunkSender, Room};
use crate::issue::Limits;
use crate::problem::Problem;
use snowflake_io::{Decoder, Format, Records, StreamError, Tokens};

/// The most IDs one request may hold.
pub const MAX_BULK: u64 = 10_000;

/// The record format `Accept` asks for: NDJSON, CSV, or else a JSON array.
fn format_of(headers: &HeaderMap) -> (Format, &'static str) {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("application/x-ndjson") || accept.contains("application/ndjson") {
        (Format::Ndjson, "application/x-ndjson")
    } else if accept.contains("text/csv") {
        (Format::Csv, "text/csv; charset=utf-8")
    } else {
        (Format::Json, "application/json")
    }
}

/// Whether the body is a JSON array; anything else is read as text.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

fn too_many() -> Problem {
    let mut problem = Problem::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too-many-ids",
        format!("the body holds more than {MAX_BULK} IDs; send at most {MAX_BULK} a request"),
    );
    problem.field = Some("body".into());
    problem
}

/// Decode many IDs: a JSON array of strings (`Content-Type: application/json`)
/// or text, one ID per line or whitespace-separated.
#[utoipa::path(post, path = "/api/v1/decode", tag = "ids",
    params(
        ("layout" = Option<String>, Query, description = "preset name or custom layout"),
        ("epoch" = Option<String>, Query, description = "override the layout's epoch"),
        ("tick_ms" = Option<String>, Query, description = "override the layout's tick"),
        ("format" = Option<String>, Query, description = "read the IDs in this text form; without it, decimal and 0x hex; CSV writes the id column in it"),
    ),
    request_body(description = "up to 10000 IDs", content(
        (Vec<String> = "application/json", example = json!(["4194439168", "0xfa021000"])),
        (String = "text/plain", example = "4194439168\n0xfa021000\n"),
    )),
    responses(
        (status = 200, description = "one record per ID, in order: its breakdown, or the problem with it. \
            `Accept: application/x-ndjson` gives one record per line; `Accept: text/csv` a header \
            `line,id,timestamp_ms,time,<fields>,error` and one row per ID", content(
            (Vec<crate::routes::schema::BulkItemSchema> = "application/json"),
            (crate::routes::schema::BulkItemSchema = "application/x-ndjson"),
            (String = "text/csv"),
        )),
        (status = 400, description = "bad parameters, or a body that is not a JSON array of strings", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "more than 10000 IDs, or a body over the size limit", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn decode_many(
    limits: Arc<Limits>,
    headers: HeaderMap,
    QueryParams(params): QueryParams,
    body: Bytes,
) -> Result<Response, Problem> {
    only(&params, &["layout", "epoch", "tick_ms", "format"])?;
    let layout = layout_of(&params)?;
    let form = text_form(&params)?;
    let (format, content_type) = format_of(&headers);
    let input = Input::read(is_json(&headers), body)?;
    let deadline = Instant::now() + limits.request_timeout;
    let (tx, body) = chunks::channel(deadline);
    tokio::spawn(async move {
        if let Err(err) = answer(&tx, &layout, form, format, &input).await {
            tracing::warn!(error = %err, "a bulk decode answer stopped early");
        }
    });
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response())
}

/// A request's IDs, checked before the answer starts: a JSON array of
/// strings of at most [`MAX_BULK`], or text holding at most as many.
enum Input {
    Json(Vec<String>),
    Text(Bytes),
}

impl Input {
    fn read(json: bool, body: Bytes) -> Result<Input, Problem> {
        if json {
            let items: Vec<String> = serde_json::from_slice(&body).map_err(|err| {
                Problem::bad_request(
                    "body",
                    format!("the body is not a JSON array of strings: {err}"),
                )
            })?;
            if items.len() as u64 > MAX_BULK {
                return Err(too_many());
            }
            return Ok(Input::Json(items));
        }
        let mut tokens = Tokens::new(&body[..]);
        let mut count = 0u64;
        while tokens.next_token().map_err(|_| internal())?.is_some() {
            count += 1;
            if count > MAX_BULK {
                return Err(too_many());
            }
        }
        Ok(Input::Text(body))
    }
}

/// The records of `input`, handed to `tx` a piece at a time as the client
/// takes them. What stays in memory for a client that reads nothing is its
/// input, the piece waiting and the piece being written.
async fn answer(
    tx: &ChunkSender,
    layout: &Layout,
    form: Option<TextForm>,
    format: Format,
    input: &Input,
) -> Result<(), StreamError> {
    let output = form.unwrap_or(TextForm::Decimal);
    let mut records = Records::gathering(Vec::new(), layout, format, output, PIECE)?;
    // Room first, then the piece: nothing is written for a client that left
    // or has not taken the piece before.
    let Some(mut room) = tx.room().await else {
        return Ok(());
    };
    let next = async |records: &mut Records<'_, Vec<u8>>, room: Room<'_>| {
        room.send(Bytes::from(records.drain()?), false);
        Ok::<_, StreamError>(tx.room().await)
    };
    match input {
        Input::Json(items) => {
            for (line, item) in (1..).zip(items) {
                let text = item.trim();
                match Id::parse_as(text, form).and_then(|id| layout.decode(id)) {
                    Ok(decoded) => records.ok(line, &decoded)?,
                    Err(err) => records.bad(line, text, &err)?,
                }
                if records.pending() >= PIECE {
                    let Some(more) = next(&mut records, room).await? else {
                        return Ok(());
                    };
                    room = more;
                }
            }
        }
        Input::Text(body) => {
            let mut decoder = Decoder::new(&body[..], form, Some(MAX_BULK));
            while decoder.next(&mut records, |_, _, _| Ok(()))? {
                if records.pending() >= PIECE {
                    let Some(more) = next(&mut records, room).await? else {
                        return Ok(());
                    };
                    room = more;
                }
            }
        }
    }
    room.send(Bytes::from(records.finish()?), true);
    Ok(())
}

/// The size of a piece of the answer.
const PIECE: usize = 16 * 1024;

fn internal() -> Problem {
    Problem::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "internal server error",
    )
}

/// The route; `limits` give the time a client has to read the answer.
pub(crate) fn routes(limits: Arc<Limits>) -> Routes {
    Routes::default().route(
        "/api/v1/decode",
        axum::routing::post(move |headers: HeaderMap, query: QueryParams, body: Bytes| {
            decode_many(Arc::clone(&limits), headers, query, body)
        }),
    )
}

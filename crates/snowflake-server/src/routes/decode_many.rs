//! `POST /api/v1/decode`: up to [`MAX_BULK`] IDs in one request, as a JSON
//! array of strings or a text body of IDs separated by whitespace, answered
//! as JSON, NDJSON or CSV by `Accept`. The records are the ones `snowflake
//! decode -` writes, from the same code in `snowflake_io`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use snowflake::{Id, Layout, TextForm};
use tokio::time::Instant;

use super::accept::{Negotiated, offers, uncached};
use super::query::{FormQuery, LayoutQuery, Query, query_set};
use crate::chunks::{self, ChunkSender, Room};
use crate::problem::Problem;
use crate::state::AppState;
use snowflake_io::{Decoder, Format, Records, StreamError, Tokens};

/// The most IDs one request may hold.
pub const MAX_BULK: u64 = 10_000;

// The record formats, by `Accept`: a JSON array unless asked otherwise.
offers!(Format {
    "application/json" => Format::Json,
    "application/json; charset=utf-8" => Format::Json,
    "application/x-ndjson" => Format::Ndjson,
    "application/ndjson" => Format::Ndjson,
    "text/csv; charset=utf-8" => Format::Csv,
    "text/csv" => Format::Csv,
});

query_set! {
    /// What a bulk decode takes besides its body.
    DecodeManyQuery { layout: LayoutQuery, form: FormQuery }
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
#[utoipa::path(post, path = "/api/v1/decode", tag = "ids", params(DecodeManyQuery),
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
        (status = 406, description = "an Accept header that takes none of JSON, NDJSON and CSV", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "more than 10000 IDs, or a body over the size limit", body = Problem, content_type = "application/problem+json"),
    ))]
pub(crate) async fn decode_many(
    State(state): State<Arc<AppState>>,
    Negotiated(format): Negotiated<Format>,
    Query(query): Query<DecodeManyQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Problem> {
    let layout = query.layout.layout()?;
    let form = query.form.form()?;
    let input = Input::read(is_json(&headers), body)?;
    let deadline = Instant::now() + state.request_timeout;
    let (tx, body) = chunks::channel(deadline);
    tokio::spawn(async move {
        if let Err(err) = answer(&tx, &layout, form, format, &input).await {
            tracing::warn!(error = %err, "a bulk decode answer stopped early");
        }
    });
    Ok(uncached(format, body))
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
        while tokens
            .next_token()
            .map_err(|_| Problem::internal())?
            .is_some()
        {
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

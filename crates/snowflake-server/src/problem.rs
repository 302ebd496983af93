//! Every error response is `application/problem+json` (RFC 9457), built here.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use snowflake::ErrorKind;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// Client text as it appears in a message: quoted, control characters
/// escaped (no terminal escape survives into a log or a terminal), and cut
/// to a length that keeps a hostile value from filling the answer.
pub(crate) fn quoted(text: &str) -> String {
    const MAX: usize = 100;
    match text.char_indices().nth(MAX) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}…", &text[..end]),
    }
}

/// An error as the API reports it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short, fixed summary of the kind.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What exactly went wrong, in the words the CLI uses too.
    pub detail: String,
    /// The request parameter at fault, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(skip)]
    retry_after: Option<u64>,
}

impl Problem {
    /// A problem of `status`, its type named by `slug`.
    pub fn new(status: StatusCode, slug: &str, detail: impl Into<String>) -> Self {
        Problem {
            kind: format!("https://snowflake.invalid/problems/{slug}"),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            field: None,
            retry_after: None,
        }
    }

    /// A 400 naming the parameter at fault.
    pub fn bad_request(field: &str, detail: impl Into<String>) -> Self {
        let mut problem = Problem::new(StatusCode::BAD_REQUEST, "invalid-input", detail);
        problem.field = Some(field.to_string());
        problem
    }

    /// A 503: the generator cannot issue now; retry shortly.
    pub fn unavailable(detail: impl Into<String>) -> Self {
        let mut problem = Problem::new(StatusCode::SERVICE_UNAVAILABLE, "cannot-issue", detail);
        problem.retry_after = Some(1);
        problem
    }

    /// A 503 that waiting does not mend: no `Retry-After`.
    pub(crate) fn needs_operator(detail: impl Into<String>) -> Self {
        let mut problem = Problem::unavailable(detail);
        problem.retry_after = None;
        problem
    }

    /// A 500 that says nothing of its cause.
    pub(crate) fn internal() -> Self {
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal server error",
        )
    }

    /// Why issuing failed, as a 503: none of it is the client's doing, so
    /// never a 400 about a parameter the client did not send. `Retry-After`
    /// only where waiting can help.
    pub(crate) fn from_issue(err: &snowflake::Error) -> Self {
        match err.kind() {
            ErrorKind::ClockBackwards => {
                let mut problem = Problem::unavailable(err.to_string());
                let ms = err.clock_backwards_ms().unwrap_or(1000);
                problem.retry_after = Some(ms.div_ceil(1000).max(1));
                problem
            }
            // The time field is used up, or the clock reads a time before
            // the layout's epoch: the operator must act; retrying will not do.
            ErrorKind::TimeExhausted | ErrorKind::InvalidInput => {
                tracing::error!(error = %err, "the generator cannot issue IDs at this time");
                let mut problem = Problem::unavailable(
                    "the clock is outside the time range of this server's layout; \
                     it cannot issue IDs until the operator acts",
                );
                problem.retry_after = None;
                problem
            }
            // Store errors carry file paths and keys: logged, not shown. A
            // store that stopped for good (its mark damaged, or in another's
            // hands) gets no Retry-After: waiting will not help.
            _ if err.needs_operator() => {
                tracing::error!(error = %err, "the generator stopped issuing until the operator acts");
                Problem::needs_operator(
                    "this node stopped issuing IDs until its operator acts; see the server log",
                )
            }
            _ => {
                tracing::error!(error = %err, "the generator cannot store its mark");
                Problem::unavailable("the generator cannot issue IDs right now; see the server log")
            }
        }
    }

    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

/// Bad input is a 400 naming the field; a generator that cannot issue now
/// (clock far behind, time field used up, mark store failing) is a 503.
impl From<snowflake::Error> for Problem {
    fn from(err: snowflake::Error) -> Self {
        match err.kind() {
            ErrorKind::InvalidInput => {
                let mut problem =
                    Problem::new(StatusCode::BAD_REQUEST, "invalid-input", err.to_string());
                problem.field = err.field().map(str::to_string);
                problem
            }
            ErrorKind::ClockBackwards | ErrorKind::TimeExhausted => {
                Problem::unavailable(err.to_string())
            }
            // Store errors carry file paths: logged, not shown.
            _ => {
                tracing::error!(error = %err, "the generator cannot issue IDs");
                Problem::unavailable("the generator cannot issue IDs right now; see the server log")
            }
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status();
        let retry_after = self.retry_after;
        let mut response = (status, Json(self)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(secs) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// Turns the error responses that axum and tower produce themselves (405,
/// 408, 413, 415, 503 from load shedding, a panic's 500) into problem+json,
/// so that clients see one error format. Internal detail never reaches them.
pub fn as_problem(response: Response) -> Response {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return response;
    }
    let (slug, detail) = match status {
        StatusCode::NOT_FOUND => ("not-found", "there is no such route"),
        StatusCode::METHOD_NOT_ALLOWED => {
            ("method-not-allowed", "this route does not take that method")
        }
        StatusCode::PAYLOAD_TOO_LARGE => ("too-large", "the request body is too large"),
        StatusCode::REQUEST_TIMEOUT => ("timeout", "the request took too long"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported-media-type", "unsupported media type"),
        StatusCode::SERVICE_UNAVAILABLE => ("unavailable", "the server is busy; try again"),
        s if s.is_server_error() => ("internal", "internal server error"),
        _ => ("bad-request", "the request is malformed"),
    };
    let mut problem = Problem::new(status, slug, detail);
    if let Some(allow) = response.headers().get(header::ALLOW).cloned() {
        let mut out = problem.into_response();
        out.headers_mut().insert(header::ALLOW, allow);
        return out;
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        problem.retry_after = Some(1);
    }
    problem.into_response()
}

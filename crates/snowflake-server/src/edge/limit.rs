//! The limits a request runs under: one turn of the server-wide
//! concurrency, the request timeout, a panic caught, and a cap on the body
//! it reads.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Instant;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body::Body as _;
use http_body_util::Limited;
use tokio::time::Sleep;

use super::Edge;
use crate::problem::Problem;

/// Request bodies are small or absent, but for `POST /api/v1/decode`'s
/// 10,000 IDs (about 230 KB as a JSON array); anything larger is refused
/// with 413.
pub(super) const BODY_LIMIT: usize = 512 * 1024;

impl Edge {
    /// Runs the route's future once it has a turn, all within the request
    /// timeout counted from `start`, when the request reached the edge; a
    /// panic in the route becomes a 500.
    ///
    /// The timer is set only if the route does not answer at once: most
    /// requests (a few IDs, one ID's breakdown, a health check) are done on
    /// their first poll, and a timer made and dropped for each of them
    /// would be work on every request for nothing. The panic is caught
    /// here, around each poll, rather than by tower-http's
    /// `CatchPanicLayer`, which boxes a future and a body of its own for
    /// every request.
    pub(super) async fn run<F>(&self, route: F, start: Instant) -> Response
    where
        F: Future<Output = Result<Response, Infallible>>,
    {
        let served = async {
            // The semaphore is never closed, so a turn always comes.
            let _turn = self.turns.acquire().await;
            match route.await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        };
        let mut served = pin!(served);
        let mut timer: Option<Pin<Box<Sleep>>> = None;
        let deadline = tokio::time::Instant::from_std(start) + self.request_timeout;
        poll_fn(|cx| {
            match panic::catch_unwind(AssertUnwindSafe(|| served.as_mut().poll(cx))) {
                Ok(Poll::Ready(response)) => return Poll::Ready(response),
                Ok(Poll::Pending) => {}
                // The route's future is not polled again: it is dropped with
                // this one, its turn with it. `as_problem` words the 500
                // without detail; the log has the panic's message.
                Err(payload) => {
                    let message = payload
                        .downcast_ref::<&str>()
                        .copied()
                        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                        .unwrap_or("a panic without a message");
                    tracing::error!(panic = message, "a route panicked");
                    return Poll::Ready(StatusCode::INTERNAL_SERVER_ERROR.into_response());
                }
            }
            let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            timer.as_mut().poll(cx).map(|()| {
                Problem::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "timeout",
                    "the request took too long",
                )
                .into_response()
            })
        })
        .await
    }
}

/// Caps the body at [`BODY_LIMIT`] while it is read, for a body whose
/// length was not declared (chunked) or not truthfully: a route reading
/// more gets a length-limit error, which axum answers with 413. A request
/// without a body, as most are, is passed on as it is, without the boxed
/// wrapper (tower-http's `RequestBodyLimitLayer` wraps every body).
pub(super) fn limit_body(request: Request<Body>) -> Request<Body> {
    if request.body().is_end_stream() {
        return request;
    }
    request.map(|body| Body::new(Limited::new(body, BODY_LIMIT)))
}

//! The outermost layer of every route: who may ask and how much they may
//! send, the turn, the timeout and the panic catch around the route, the
//! headers every answer carries, the log of server errors, and the request
//! metrics.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body::Body as _;
use http_body_util::Limited;
use tokio::sync::Semaphore;
use tokio::time::Sleep;
use tower::{Layer, Service};

use crate::config::Config;
use crate::host::{has_two_hosts, host_name, host_of, is_loopback_name};
use crate::problem::{self, Problem};
use crate::state::AppState;
use crate::telemetry::{RouteMemo, UNMATCHED};

/// The longest request target served: no route needs more, and hyper's
/// own limit (its 64 KiB buffer) would answer with an empty 431 instead.
const MAX_URI: usize = 8 * 1024;

/// Request bodies are small or absent, but for `POST /api/v1/decode`'s
/// 10,000 IDs (about 230 KB as a JSON array); anything larger is refused
/// with 413.
const BODY_LIMIT: usize = 512 * 1024;

/// The routes that use up IDs, which a foreign page must not call.
const ISSUING: [&str; 1] = ["/api/v1/ids"];

/// What the edge needs besides the state: who may ask.
pub(crate) struct Edge {
    state: Arc<AppState>,
    /// One turn per request in flight, for the whole server. A
    /// `ConcurrencyLimitLayer` under `Router::layer` gave every route and
    /// method its own semaphore; tower's global limit waits in `poll_ready`,
    /// where no timeout sees it. Here the wait is inside the request's time.
    turns: Arc<Semaphore>,
    request_timeout: Duration,
    cors_origins: Vec<String>,
    loopback_hosts_only: bool,
    allowed_hosts: Vec<String>,
}

impl Edge {
    pub(crate) fn new(state: Arc<AppState>, config: &Config) -> Self {
        Edge {
            state,
            turns: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
            request_timeout: config.request_timeout,
            cors_origins: config.cors_origins.clone(),
            loopback_hosts_only: config.loopback_hosts_only,
            allowed_hosts: config.allowed_hosts.clone(),
        }
    }

    /// A refusal for a request whose host is ambiguous (two `Host`
    /// headers: 400) or not this service's (421), or `None`. A page on
    /// another site that rebinds its DNS name to 127.0.0.1 reaches a
    /// loopback service under its own name, which this catches.
    fn wrong_host(&self, request: &Request<Body>) -> Option<Response> {
        if has_two_hosts(request) {
            let detail = "the request has more than one Host header; send exactly one";
            return Some(
                Problem::new(StatusCode::BAD_REQUEST, "two-hosts", detail).into_response(),
            );
        }
        if !self.loopback_hosts_only {
            return None;
        }
        let host = host_of(request);
        let name = host.map(host_name).unwrap_or_default();
        if is_loopback_name(name)
            || self
                .allowed_hosts
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(name))
        {
            return None;
        }
        let detail = match host {
            None => {
                "the request names no host; this service answers to loopback names only".to_string()
            }
            Some(host) => format!(
                "host {} is not served here; this service answers to loopback names \
                 (localhost, 127.0.0.1, [::1]) and the hosts its operator allows",
                problem::quoted(host)
            ),
        };
        Some(Problem::new(StatusCode::MISDIRECTED_REQUEST, "wrong-host", detail).into_response())
    }

    /// Who is asking, by the `Origin` a browser sends.
    fn origin(&self, request: &Request<Body>) -> Origin {
        let Some(origin) = request.headers().get(header::ORIGIN) else {
            return Origin::Own;
        };
        let text = origin.to_str().unwrap_or("");
        if let Some(host) = host_of(request) {
            let own = text
                .strip_prefix("http://")
                .or_else(|| text.strip_prefix("https://"));
            if own.is_some_and(|o| o.eq_ignore_ascii_case(host)) {
                return Origin::Own;
            }
        }
        if self.cors_origins.iter().any(|o| o == text) {
            return Origin::Allowed(origin.clone());
        }
        Origin::Foreign
    }
}

impl Edge {
    /// Runs the route's future once it has a turn, all within the request
    /// timeout counted from `start`, when the request reached the edge; a
    /// panic in the route becomes a 500.
    ///
    /// The timer is set only if the route does not answer at once: most
    /// requests (a few IDs, one ID's breakdown, a health check) are done on
    /// their first poll, and a timer made and dropped for each of them cost
    /// a share of the throughput of the one-ID route. The panic is caught
    /// here, around each poll, rather than by tower-http's
    /// `CatchPanicLayer`, whose own boxed future and body cost two more
    /// allocations a request.
    async fn run<F>(&self, route: F, start: Instant) -> Response
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

    /// What the edge says to a request before the route sees it: refused
    /// (too long, too large, the wrong host, a foreign page, or a preflight
    /// answered here), or let through with the CORS origin to name.
    fn admit(&self, request: &Request<Body>, path: &str) -> Admission {
        let too_long = request
            .uri()
            .path_and_query()
            .is_some_and(|p| p.as_str().len() > MAX_URI);
        if too_long {
            let detail = format!("the request target is longer than {MAX_URI} bytes");
            return Admission::Answered(
                Problem::new(StatusCode::URI_TOO_LONG, "uri-too-long", detail).into_response(),
            );
        }
        if declared_too_large(request) {
            return Admission::Answered(problem::as_problem(
                StatusCode::PAYLOAD_TOO_LARGE.into_response(),
            ));
        }
        if let Some(refused) = self.wrong_host(request) {
            return Admission::Answered(refused);
        }
        if !ISSUING.contains(&path) {
            return Admission::Served(None);
        }
        match self.origin(request) {
            Origin::Foreign => Admission::Answered(foreign(request)),
            Origin::Allowed(origin) if request.method() == Method::OPTIONS => {
                Admission::Answered(preflight(origin))
            }
            Origin::Allowed(origin) => Admission::Served(Some(origin)),
            Origin::Own => Admission::Served(None),
        }
    }
}

/// What [`Edge::admit`] decided.
enum Admission {
    /// The edge answers; the route is not called.
    Answered(Response),
    /// The route answers; a page from this allowed origin gets CORS headers.
    Served(Option<HeaderValue>),
}

/// Who is asking, for a route that issues IDs.
enum Origin {
    /// No browser, or the service's own page.
    Own,
    /// A page from an origin the operator allows: gets CORS headers.
    Allowed(HeaderValue),
    /// A page from any other origin: refused.
    Foreign,
}

fn foreign(request: &Request<Body>) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .map(|o| String::from_utf8_lossy(o.as_bytes()).into_owned())
        .unwrap_or_default();
    let detail = format!(
        "pages from origin {} may not ask this service for IDs; \
         its operator can allow an origin",
        problem::quoted(&origin)
    );
    Problem::new(StatusCode::FORBIDDEN, "foreign-origin", detail).into_response()
}

/// Whether the request says its body is longer than [`BODY_LIMIT`]: refused
/// before a byte of it is read, on every route.
fn declared_too_large(request: &Request<Body>) -> bool {
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > BODY_LIMIT as u64)
}

/// Caps the body at [`BODY_LIMIT`] while it is read, for a body whose
/// length was not declared (chunked) or not truthfully: a route reading
/// more gets a length-limit error, which axum answers with 413. A request
/// without a body, as most are, is passed on as it is, without the boxed
/// wrapper (tower-http's `RequestBodyLimitLayer` wraps every body).
fn limit_body(request: Request<Body>) -> Request<Body> {
    if request.body().is_end_stream() {
        return request;
    }
    request.map(|body| Body::new(Limited::new(body, BODY_LIMIT)))
}

/// `nosniff` on every answer: a JSON body or a problem must never be
/// sniffed into a script or a page.
fn harden(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

fn allow_origin(headers: &mut HeaderMap, origin: HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(header::VARY, HeaderValue::from_static("origin"));
}

/// The answer to a CORS preflight from an allowed origin.
fn preflight(origin: HeaderValue) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    allow_origin(headers, origin);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("accept, content-type"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

/// What the edge wraps: a route of the router, answering every request.
pub(crate) trait Route:
    Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
    + Clone
    + Send
    + 'static
{
}

impl<S> Route for S where
    S: Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
        + Clone
        + Send
        + 'static
{
}

/// The edge as a tower layer, put on every route by `Router::layer`.
///
/// A layer of its own rather than `axum::middleware::from_fn`, which boxes
/// the next service anew, boxes its future and maps it twice on every
/// request: five allocations a request on the one-ID route, where this
/// makes one, its future.
#[derive(Clone)]
pub(crate) struct EdgeLayer(Arc<Edge>);

impl EdgeLayer {
    pub(crate) fn new(edge: Edge) -> Self {
        EdgeLayer(Arc::new(edge))
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = EdgeService<S>;

    fn layer(&self, route: S) -> EdgeService<S> {
        EdgeService {
            edge: Arc::new(RouteEdge {
                edge: Arc::clone(&self.0),
                memo: RouteMemo::default(),
            }),
            route,
        }
    }
}

/// One route behind the edge.
#[derive(Clone)]
pub(crate) struct EdgeService<S> {
    edge: Arc<RouteEdge>,
    route: S,
}

/// The edge as one route sees it: the shared checks and limits, and the
/// route's own metric handles. One `Arc` for both, since each request's
/// future holds a clone, and every clone is a write to a count that the
/// cores share.
struct RouteEdge {
    edge: Arc<Edge>,
    memo: RouteMemo,
}

impl<S: Route> Service<Request<Body>> for EdgeService<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // axum's routes are always ready; the wait for a turn happens in
        // the request's own time, under its timeout (see `Edge::turns`).
        self.route.poll_ready(cx)
    }

    /// Checks who asks and what they send, then calls the route, which
    /// only makes its future: the route runs when that future is polled,
    /// inside the edge's turn, timeout and panic catch. Called in place
    /// rather than on a clone of the route, which cost an allocation.
    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let start = Instant::now();
        let route_edge = Arc::clone(&self.edge);
        let matched = request.extensions().get::<MatchedPath>();
        let method = request.method().clone();
        let path = matched.map_or(UNMATCHED, MatchedPath::as_str);
        // The route's name for `finish`: the memo's copy once the route has
        // answered 200, so the request's own (an `Arc`, whose count the
        // cores share) is cloned only until then.
        let label = if route_edge.memo.holds(path) {
            Label::Remembered
        } else {
            matched.cloned().map_or(Label::Unmatched, Label::Matched)
        };
        match route_edge.edge.admit(&request, path) {
            Admission::Answered(response) => {
                Box::pin(async move { Ok(finish(&route_edge, &label, &method, response, start)) })
            }
            Admission::Served(cors) => {
                let route = self.route.call(limit_body(request));
                Box::pin(async move {
                    let served = route_edge.edge.run(route, start).await;
                    let mut response = problem::as_problem(served);
                    if let Some(origin) = cors {
                        allow_origin(response.headers_mut(), origin);
                    }
                    Ok(finish(&route_edge, &label, &method, response, start))
                })
            }
        }
    }
}

/// Which route a request went to, as [`finish`] names it in the metrics.
enum Label {
    /// The route its layer's memo names.
    Remembered,
    /// The route the router matched.
    Matched(MatchedPath),
    /// No route: the fallback answered.
    Unmatched,
}

/// Adds the headers every answer carries, logs a server error, then counts
/// the request and times it by route and status.
fn finish(
    route_edge: &RouteEdge,
    label: &Label,
    method: &Method,
    mut response: Response,
    start: Instant,
) -> Response {
    let path = match label {
        Label::Remembered => route_edge.memo.route().unwrap_or(UNMATCHED),
        Label::Matched(matched) => matched.as_str(),
        Label::Unmatched => UNMATCHED,
    };
    harden(response.headers_mut());
    let status = response.status();
    if status.is_server_error() {
        // Whether or not the trace layer is on (see `app`), the one log
        // line of a failure besides the metrics.
        tracing::error!(route = path, method = %method, status = status.as_u16(), "answered with a server error");
    }
    route_edge.edge.state.telemetry.record(
        &route_edge.memo,
        path,
        method,
        status,
        start.elapsed().as_secs_f64(),
    );
    response
}

//! Who may ask and what they may send: refused before the route runs, or
//! let through with the CORS origin to name.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Edge;
use super::host::{host_name, host_of, host_once, is_loopback_name};
use super::limit::BODY_LIMIT;
use crate::problem::{self, Problem};

/// The longest request target served: no route needs more, and hyper's
/// own limit (its 64 KiB buffer) would answer with an empty 431 instead.
const MAX_URI: usize = 8 * 1024;

impl Edge {
    /// A refusal for a request whose host is ambiguous (two `Host`
    /// headers: 400) or not this service's (421), or `None`. A page on
    /// another site that rebinds its DNS name to 127.0.0.1 reaches a
    /// loopback service under its own name, which this catches.
    fn wrong_host(&self, request: &Request<Body>) -> Option<Response> {
        let Ok(host) = host_once(request) else {
            let detail = "the request has more than one Host header; send exactly one";
            return Some(
                Problem::new(StatusCode::BAD_REQUEST, "two-hosts", detail).into_response(),
            );
        };
        if !self.loopback_hosts_only {
            return None;
        }
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

    /// What the edge says to a request before the route sees it: refused
    /// (too long, too large, the wrong host, a foreign page, or a preflight
    /// answered here), or let through with the CORS origin to name.
    pub(super) fn admit(&self, request: &Request<Body>, path: &str) -> Admission {
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
        if !self.issuing.iter().any(|issuing| issuing == path) {
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
pub(super) enum Admission {
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

pub(super) fn allow_origin(headers: &mut HeaderMap, origin: HeaderValue) {
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

//! The web page, embedded in the binary: no CDN, no files beside it.

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;

const INDEX: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

/// The page loads its script and style sheet from this server and talks
/// only to it; nothing may frame it (a `<meta>` policy cannot say that).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                   form-action 'self'; frame-ancestors 'none'";

/// The headers of the page itself: its policy, which a `<meta>` tag cannot
/// fully state (`frame-ancestors` applies only as a header), no referrer
/// to other sites, no framing by older browsers either. Only the page gets
/// them: a JSON answer is no document, and 300 bytes more on every one of
/// them cost the one-ID path measurable throughput.
fn page_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(index))
        .route(
            "/assets/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/assets/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// German when the browser prefers it to English, else English.
pub fn language(headers: &HeaderMap) -> &'static str {
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut best = ("en", -1.0f32);
    for part in accept.split(',') {
        let mut pieces = part.trim().split(';');
        let tag = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = pieces
            .find_map(|p| p.trim().strip_prefix("q="))
            .and_then(|q| q.parse::<f32>().ok())
            .unwrap_or(1.0);
        let lang = match tag.split('-').next() {
            Some("de") => "de",
            Some("en") => "en",
            _ => continue,
        };
        if q > best.1 {
            best = (lang, q);
        }
    }
    best.0
}

async fn index(headers: HeaderMap) -> Response {
    let html = INDEX.replace("{{lang}}", language(&headers));
    let mut response = (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::VARY, HeaderValue::from_static("accept-language")),
        ],
        html,
    )
        .into_response();
    page_headers(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_german_only_when_preferred() {
        let pick = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_LANGUAGE,
                HeaderValue::from_str(value).unwrap(),
            );
            language(&headers)
        };
        assert_eq!(pick("de-DE,de;q=0.9,en;q=0.8"), "de");
        assert_eq!(pick("en-US,en;q=0.9,de;q=0.8"), "en");
        assert_eq!(pick("fr-FR,de;q=0.5"), "de");
        assert_eq!(pick("fr"), "en");
        assert_eq!(language(&HeaderMap::new()), "en");
    }
}

//! The headers every answer carries.

use axum::http::{HeaderMap, HeaderValue, header};

/// `nosniff` on every answer: a JSON body or a problem must never be
/// sniffed into a script or a page.
pub(super) fn harden(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

//! Content negotiation: which of the media types a route writes the
//! client's `Accept` prefers, by RFC 9110's rules (q-values, `*/*` and
//! `text/*`, a more specific range over a wider one, `q=0` as a refusal),
//! as `headers-accept` reads them.
//!
//! What the service does with each kind of header:
//!
//! - none, an empty one, or `*/*`: the route's first media type (JSON),
//!   without parsing anything (most requests for one ID carry no `Accept`);
//! - one that some media type the route writes satisfies: the one the
//!   client prefers, the route's order breaking ties;
//! - one that none satisfies (`Accept: image/png`, or
//!   `application/json;q=0` alone): 406, in problem+json, naming what the
//!   route writes. Answering JSON anyway would hand a client that said it
//!   cannot read JSON IDs it would throw away;
//! - one that does not parse: 400 naming the header.
//!
//! Media types, their parameters' names and `charset` values are read
//! without regard to case.

use std::str::FromStr;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use headers_accept::Accept;
use mediatype::MediaType;

use crate::problem::{self, Problem};

/// The media types a route writes, each with what it means to the route.
///
/// A type the route answers with a `charset` is listed with and without
/// it: `headers-accept` matches a range that has parameters (a `q`
/// included) only to an offer with the same ones.
pub(crate) trait Offers: Copy + PartialEq + Send + Sync + 'static {
    /// Each media type as `Accept` may name it and what it stands for, in
    /// the service's order of preference (the first is the default); the
    /// first spelling of a value is the `Content-Type` of its answers.
    const MEDIA: &'static [(&'static str, Self)];

    /// [`Offers::MEDIA`] parsed, made once.
    fn parsed() -> &'static [MediaType<'static>];

    /// The `Content-Type` of an answer in this media type.
    fn content_type(self) -> &'static str {
        Self::MEDIA
            .iter()
            .find(|(_, value)| *value == self)
            .map_or(Self::MEDIA[0].0, |(spelling, _)| spelling)
    }
}

/// Declares what a route writes: `offers!(Type { "media/type" => value, … })`
/// implements [`Offers`] for `Type` with that table.
macro_rules! offers {
    ($ty:ty { $($media:literal => $value:expr),+ $(,)? }) => {
        impl $crate::routes::accept::Offers for $ty {
            const MEDIA: &'static [(&'static str, $ty)] = &[$(($media, $value)),+];

            fn parsed() -> &'static [mediatype::MediaType<'static>] {
                static PARSED: std::sync::LazyLock<Vec<mediatype::MediaType<'static>>> =
                    std::sync::LazyLock::new($crate::routes::accept::parse_all::<$ty>);
                &PARSED
            }
        }
    };
}
pub(crate) use offers;

/// The spellings of `M`'s media types, parsed.
pub(crate) fn parse_all<M: Offers>() -> Vec<MediaType<'static>> {
    M::MEDIA
        .iter()
        .map(|(spelling, _)| match MediaType::parse(spelling) {
            Ok(parsed) => parsed,
            Err(err) => unreachable!("{spelling} is not a media type: {err}"),
        })
        .collect()
}

/// The media type `Accept` asks for among those the route writes, as a
/// handler's argument; refused with 406 when it asks for none of them.
pub(crate) struct Negotiated<M>(pub(crate) M);

impl<M: Offers, S: Send + Sync> FromRequestParts<S> for Negotiated<M> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        // Read where the header lies: the `HeaderMap` extractor would copy
        // every header of every request to look at one.
        let mut accept = parts.headers.get_all(header::ACCEPT).iter();
        match (accept.next(), accept.next()) {
            (None, _) => Ok(Negotiated(M::MEDIA[0].1)),
            (Some(one), None) => negotiate(one.as_bytes()).map(Negotiated),
            (Some(_), Some(_)) => {
                let all: Vec<&[u8]> = parts
                    .headers
                    .get_all(header::ACCEPT)
                    .iter()
                    .map(HeaderValue::as_bytes)
                    .collect();
                negotiate(&all.join(&b","[..])).map(Negotiated)
            }
        }
    }
}

/// What `accept`, a whole `Accept` header, chooses among `M`'s media types.
pub(crate) fn negotiate<M: Offers>(accept: &[u8]) -> Result<M, Problem> {
    let trimmed = accept.trim_ascii();
    if trimmed.is_empty() || trimmed == b"*/*" {
        return Ok(M::MEDIA[0].1);
    }
    let text = std::str::from_utf8(trimmed)
        .map_err(|_| malformed(&String::from_utf8_lossy(trimmed)))?
        .to_ascii_lowercase();
    let parsed = Accept::from_str(&text).map_err(|_| malformed(&text))?;
    let offered = M::parsed();
    let chosen = parsed
        .negotiate(offered)
        .ok_or_else(|| not_acceptable::<M>(&text))?;
    let index = offered
        .iter()
        .position(|m| std::ptr::eq(m, chosen))
        .unwrap_or(0);
    Ok(M::MEDIA[index].1)
}

/// An answer of `body` in the media type negotiated, never to be cached:
/// each holds fresh IDs, or records of the request's own.
pub(crate) fn uncached<M: Offers>(media: M, body: Body) -> Response {
    let content_type = HeaderValue::from_static(media.content_type());
    let no_store = HeaderValue::from_static("no-store");
    let headers = [
        (header::CONTENT_TYPE, content_type),
        (header::CACHE_CONTROL, no_store),
    ];
    (headers, body).into_response()
}

fn malformed(accept: &str) -> Problem {
    Problem::bad_request(
        "accept",
        format!(
            "the Accept header {} is not a list of media types",
            problem::quoted(accept)
        ),
    )
}

/// What the route writes, in words: `application/json or text/plain`.
fn written<M: Offers>() -> String {
    let mut names: Vec<&str> = Vec::new();
    for (i, (spelling, value)) in M::MEDIA.iter().enumerate() {
        let first = M::MEDIA[..i].iter().all(|(_, seen)| seen != value);
        let essence = spelling.split(';').next().unwrap_or(spelling).trim();
        if first && !names.contains(&essence) {
            names.push(essence);
        }
    }
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn not_acceptable<M: Offers>(accept: &str) -> Problem {
    let mut problem = Problem::new(
        StatusCode::NOT_ACCEPTABLE,
        "not-acceptable",
        format!(
            "this route writes {}; the Accept header {} takes none of them",
            written::<M>(),
            problem::quoted(accept)
        ),
    );
    problem.field = Some("accept".into());
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A route that writes JSON (its default) or text, as the IDs route does.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Two {
        Json,
        Text,
    }

    offers!(Two {
        "application/json" => Two::Json,
        "application/json; charset=utf-8" => Two::Json,
        "text/plain; charset=utf-8" => Two::Text,
        "text/plain" => Two::Text,
    });

    fn chosen(accept: &str) -> Result<Two, u16> {
        negotiate::<Two>(accept.as_bytes()).map_err(|p| p.status)
    }

    #[test]
    fn no_preference_is_the_default() {
        for accept in ["", "  ", "*/*", "*/*;q=0.5", "application/*"] {
            assert_eq!(chosen(accept), Ok(Two::Json), "{accept:?}");
        }
    }

    #[test]
    fn the_exact_type_is_chosen_with_or_without_its_charset() {
        for accept in [
            "text/plain",
            "text/plain; charset=utf-8",
            "TEXT/Plain; Charset=UTF-8",
            "text/*",
            "image/png, text/plain",
        ] {
            assert_eq!(chosen(accept), Ok(Two::Text), "{accept:?}");
        }
        for accept in ["application/json", "application/json;charset=UTF-8"] {
            assert_eq!(chosen(accept), Ok(Two::Json), "{accept:?}");
        }
    }

    /// The higher q-value wins whatever the order; at equal q the client's
    /// order decides, and a more specific range beats a wider one.
    #[test]
    fn q_values_and_specificity_decide() {
        let cases = [
            ("text/plain;q=0.5, application/json", Two::Json),
            ("application/json;q=0.5, text/plain", Two::Text),
            ("application/json;q=0.4, text/*;q=0.9", Two::Text),
            ("text/plain, application/json", Two::Text),
            ("application/json, text/plain", Two::Json),
            ("*/*;q=0.1, text/plain;q=0.2", Two::Text),
            ("text/*;q=0.9, */*;q=1", Two::Json),
            // A browser navigating to the route.
            (
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
                Two::Json,
            ),
        ];
        for (accept, want) in cases {
            assert_eq!(chosen(accept), Ok(want), "{accept:?}");
        }
    }

    /// Nothing the route writes is acceptable: 406, naming what it writes.
    #[test]
    fn nothing_acceptable_is_a_406() {
        for accept in ["image/png", "application/json;q=0", "text/html, image/*"] {
            assert_eq!(chosen(accept), Err(406), "{accept:?}");
        }
        let problem = negotiate::<Two>(b"image/png").unwrap_err();
        assert_eq!(
            problem.detail,
            "this route writes application/json or text/plain; \
             the Accept header \"image/png\" takes none of them"
        );
        assert_eq!(problem.field.as_deref(), Some("accept"));
    }

    #[test]
    fn a_header_that_does_not_parse_is_a_400() {
        for accept in ["text", "/", "text/plain;;", "\u{7f}"] {
            assert_eq!(chosen(accept), Err(400), "{accept:?}");
        }
    }

    /// The short cut for `*/*` gives what the negotiation would.
    #[test]
    fn the_short_cut_agrees_with_the_negotiation() {
        let parsed = Accept::from_str("*/*").unwrap();
        let offered = Two::parsed();
        let chosen = parsed.negotiate(offered).unwrap();
        assert!(std::ptr::eq(chosen, &offered[0]));
    }

    #[test]
    fn the_content_type_is_a_values_first_spelling() {
        assert_eq!(Two::Json.content_type(), "application/json");
        assert_eq!(Two::Text.content_type(), "text/plain; charset=utf-8");
    }
}

//! Masked IDs (issue 21): `/api/v1/ids?masked=true` hands out IDs through
//! the operator's keyed permutation, and `/api/v1/unmask/{id}` gives the ID
//! behind one only where the operator allows it. The key is in no answer.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::Value;
use snowflake::{Id, Layout, TextForm};
use snowflake_mask::{MaskKey, Masker};
use snowflake_server::app;

use crate::support::*;

/// NIST's AES-256 sample key, as a key file would hold it.
const KEY: &str = "2b7e151628aed2a6abf7158809cf4f3cef4315f3f3a92f01e3f9e0d3c2b1a0f9";

fn masker() -> Arc<Masker> {
    let key = MaskKey::from_hex(KEY).unwrap();
    Arc::new(Masker::new(&Layout::twitter(), &key).unwrap())
}

/// The service, with the key unless `keyless`, and unmasking allowed or not.
fn router(keyless: bool, allow_unmask: bool) -> axum::Router {
    let mut config = config().with_allow_unmask(allow_unmask);
    if !keyless {
        config = config.with_masker(masker());
    }
    app(standalone(), &config)
}

fn ids_of(body: &str, plain: bool) -> Vec<String> {
    if plain {
        return body.lines().map(str::to_string).collect();
    }
    let v: Value = serde_json::from_str(body).unwrap();
    v["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// In every form, one ID, a batch and a stream: each masked ID is in the
/// layout's width and unmasks to an ID of this node, the IDs behind a
/// request's masked IDs increase, and the masked ones are not in order.
#[tokio::test]
async fn masked_ids_unmask_to_this_nodes_ids_in_every_form() {
    let masker = masker();
    let router = router(false, false);
    for form in TextForm::ALL {
        for (count, plain) in [(1, false), (1, true), (300, false), (5000, true)] {
            let request = with_headers(
                axum::http::Method::POST,
                &format!(
                    "/api/v1/ids?count={count}&masked=true&format={}",
                    form.name()
                ),
                &[(
                    "accept",
                    if plain {
                        "text/plain"
                    } else {
                        "application/json"
                    },
                )],
            );
            let (status, body) = text_of(&router, request).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            let masked = ids_of(&body, plain);
            assert_eq!(masked.len(), count, "{form:?}");
            let behind: Vec<Id> = masked
                .iter()
                .map(|text| {
                    let id = form.parse(text).unwrap();
                    assert!(id.get() <= i64::MAX as u64, "{text} is out of the layout");
                    masker.unmask(id).unwrap()
                })
                .collect();
            assert!(behind.windows(2).all(|w| w[0] < w[1]), "{form:?}");
            let twitter = Layout::twitter();
            let d = twitter.decode(behind[0]).unwrap();
            assert_eq!(
                (d.field("datacenter"), d.field("machine")),
                (Some(2), Some(5))
            );
            if count > 2 {
                let numbers: Vec<u64> = masked
                    .iter()
                    .map(|t| form.parse(t).unwrap().get())
                    .collect();
                assert!(
                    !numbers.windows(2).all(|w| w[0] < w[1]),
                    "{count} masked IDs came out in order"
                );
            }
        }
    }
}

#[tokio::test]
async fn masked_without_a_key_or_with_a_bad_value_is_refused() {
    for (keyless, uri, detail) in [
        (
            true,
            "/api/v1/ids?masked=true",
            "this service masks no IDs: its operator gives it a key with --mask-key-file",
        ),
        (
            false,
            "/api/v1/ids?masked=yes",
            "masked \"yes\" is not allowed; masked is true or false",
        ),
    ] {
        let (status, body) = get_from(&router(keyless, false), uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["field"], "masked");
        assert_eq!(v["detail"], detail);
    }
    // masked=false, and an empty value, are plain IDs.
    for uri in ["/api/v1/ids?masked=false", "/api/v1/ids?masked="] {
        let (status, body) = get_from(&router(true, false), uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    }
}

/// Unmasking over HTTP is off unless the operator turns it on: an oracle
/// that gives back what masking hides.
#[tokio::test]
async fn the_unmask_route_answers_only_where_the_operator_allows_it() {
    let id = Id::new(1541815603606036480);
    let masked = masker().mask(id).unwrap();
    let uri = format!("/api/v1/unmask/{masked}");
    for (keyless, allowed) in [(false, false), (true, true)] {
        let (status, body) = get_from(&router(keyless, allowed), &uri).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(
            body.contains("--allow-unmask") || body.contains("--mask-key-file"),
            "{body}"
        );
    }
    let router = router(false, true);
    let (status, body) = get_from(&router, &uri).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let expected = serde_json::to_value(Layout::twitter().decode(id).unwrap()).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), expected);
    // In another form, and an ID out of the layout.
    let base62 = masked.to_text(TextForm::Base62);
    let (status, body) = get_from(&router, &format!("/api/v1/unmask/{base62}?format=base62")).await;
    assert_eq!(
        (status, serde_json::from_str::<Value>(&body).unwrap()),
        (StatusCode::OK, expected)
    );
    let (status, body) = get_from(&router, "/api/v1/unmask/9223372036854775808").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

/// The key is in no answer of any route (the document, metrics, problems,
/// IDs) and in no log line.
#[tokio::test]
async fn the_key_is_in_no_answer_and_no_log() {
    let (logs, _default) = Captured::at_info();
    let router = router(false, true);
    let mut seen = String::new();
    for uri in [
        "/api/v1/openapi.json",
        "/metrics",
        "/readyz",
        "/api/v1/ids?masked=true&count=5",
        "/api/v1/ids?masked=maybe",
        "/api/v1/unmask/nope",
        "/api/v1/unmask/9223372036854775808",
        "/api/v1/unmask/1",
        "/",
    ] {
        let request = Request::get(uri)
            .header(header::ACCEPT_LANGUAGE, "en")
            .body(Body::empty())
            .unwrap();
        let (_, body) = text_of(&router, request).await;
        seen.push_str(&body);
    }
    seen.push_str(&logs.text());
    seen.push_str(&format!("{:?}", masker()));
    // Any 8 characters of the key, in either case.
    for start in 0..KEY.len() - 8 {
        let piece = &KEY[start..start + 8];
        assert!(
            !seen.to_ascii_lowercase().contains(piece),
            "a piece of the key, {piece}, is in an answer or a log"
        );
    }
}

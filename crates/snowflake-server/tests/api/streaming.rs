//! Requests for more IDs than one time unit holds, streamed in chunks
//! made as the client reads.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use snowflake_server::{AppState, Config, app};
use tower::ServiceExt;

use crate::support::*;

/// A request for 100,000 IDs through `router`, answered 200: its body, and
/// the first chunk read from it.
async fn large_request_begun(router: Router) -> (Body, Bytes) {
    let response = router
        .oneshot(
            Request::post("/api/v1/ids?count=100000")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    (body, first)
}

#[tokio::test]
async fn a_client_that_leaves_stops_a_large_request() {
    let source = standalone();
    let router = app(Arc::new(AppState::new(source.clone())), &config());
    let before = source.generator().stats().issued;
    let (body, first) = large_request_begun(router).await;
    assert!(first.starts_with(b"{\"layout\":\"twitter\",\"ids\":[\""));
    drop(body);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let issued = source.generator().stats().issued - before;
    // The chunk read, the one waiting for the reader, the one being made.
    assert!(
        issued <= 3 * 2048,
        "{issued} IDs issued for a client that left"
    );
}

#[tokio::test]
async fn a_large_request_streams_every_id_once_and_in_order() {
    for (accept, count) in [
        ("application/json", 100_000u64),
        ("text/plain", 4097),
        ("application/json", 4097),
    ] {
        let reply = send_with(
            &config(),
            with_headers(
                Method::POST,
                &format!("/api/v1/ids?count={count}"),
                &[("accept", accept)],
            ),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK);
        let ids: Vec<u64> = if accept == "text/plain" {
            reply.text().lines().map(|l| l.parse().unwrap()).collect()
        } else {
            let v = reply.json();
            assert_eq!(v["layout"], "twitter");
            v["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().parse().unwrap())
                .collect()
        };
        assert_eq!(ids.len() as u64, count, "{accept}");
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{accept}: not increasing"
        );
    }
}

#[tokio::test]
async fn a_stream_not_read_in_time_is_cut_off_and_stops_issuing() {
    let source = standalone();
    let config = Config {
        request_timeout: Duration::from_millis(200),
        ..config()
    };
    let router = app(Arc::new(AppState::new(source.clone())), &config);
    let before = source.generator().stats().issued;
    let (mut body, _) = large_request_begun(router).await;
    // The reader stalls past the deadline, then tries to go on.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut ended_in_error = false;
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            ended_in_error = true;
            break;
        }
    }
    assert!(ended_in_error, "a cut-off stream ended like a complete one");
    let issued = source.generator().stats().issued - before;
    assert!(
        issued < 100_000,
        "all {issued} IDs were made for a reader that stalled"
    );
}

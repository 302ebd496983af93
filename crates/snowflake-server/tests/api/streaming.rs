//! Requests for more IDs than one time unit holds, streamed in chunks
//! made as the client reads.

use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use snowflake_server::app;
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
    let router = app(source.clone(), &config());
    let before = source.generator().stats().issued;
    let (body, first) = large_request_begun(router).await;
    assert!(first.starts_with(b"{\"layout\":\"twitter\",\"ids\":[\""));
    drop(body);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let issued = source.generator().stats().issued - before;
    // The chunk read, and at most the one made for the room it left.
    assert!(
        issued <= 2 * CHUNK,
        "{issued} IDs issued for a client that left"
    );
}

/// The chunks of a streamed answer in process, with no socket or hyper
/// between: what the service itself holds for a reader.
const CHUNK: u64 = 1024;

/// A reader that stops after the first chunk has one more made for it and
/// no more, however long it waits: the service holds one chunk of its own
/// for a client that reads nothing, as the README says. A deeper buffer
/// fails here, where a socket's buffers would hide it.
#[tokio::test]
async fn a_stalled_reader_has_one_chunk_made_ahead_and_no_more() {
    let source = standalone();
    let router = app(source.clone(), &config());
    let before = source.generator().stats().issued;
    let (mut body, _) = large_request_begun(router).await;
    // The one chunk ahead is made within a few milliseconds; wait for it,
    // then as long again for any beyond it.
    let made = || source.generator().stats().issued - before;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while made() < 2 * CHUNK && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        made(),
        2 * CHUNK,
        "IDs made for a reader that took one chunk"
    );
    // Reading on takes the chunk ahead and makes room for one more.
    body.frame().await.unwrap().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while made() < 3 * CHUNK && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(made(), 3 * CHUNK);
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
    let config = config().with_request_timeout(Duration::from_millis(200));
    let router = app(source.clone(), &config);
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

//! Limits on requests: the request timeout, the server-wide concurrency
//! limit, the length of a request target.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use snowflake_server::app;
use tower::ServiceExt;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_requests_time_out_as_problems() {
    // One request at a time; the first holds its turn for 50 ms (its source
    // is slow), the second may wait 20 ms: waiting for a turn counts.
    let source = Arc::new(SlowSource {
        inner: standalone(),
        inside: 0.into(),
        most: 0.into(),
    });
    let config = config()
        .with_request_timeout(Duration::from_millis(20))
        .with_max_concurrency(1);
    let router = app(source.clone(), &config);
    let first = tokio::spawn(
        router
            .clone()
            .oneshot(Request::post("/api/v1/ids").body(Body::empty()).unwrap()),
    );
    // Until the first holds its turn (it has entered the slow source; `most`
    // stays set, so a loaded machine cannot make this wait forever).
    while source.most.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    let response = router
        .oneshot(Request::post("/api/v1/ids").body(Body::empty()).unwrap())
        .await
        .unwrap();
    // The first, once it started, is not cut off: its work ran to the end.
    assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    let reply = Reply::of(response).await;
    assert_problem(&reply, StatusCode::REQUEST_TIMEOUT, None, "too long");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_concurrency_limit_is_one_for_the_whole_server() {
    let source = Arc::new(SlowSource {
        inner: standalone(),
        inside: 0.into(),
        most: 0.into(),
    });
    let config = config().with_max_concurrency(1);
    let router = app(source.clone(), &config);
    let mut calls = Vec::new();
    for (method, uri) in [
        (Method::GET, "/api/v1/ids"),
        (Method::POST, "/api/v1/ids"),
        (Method::GET, "/readyz"),
        (Method::POST, "/api/v1/ids?count=2"),
    ] {
        let router = router.clone();
        calls.push(tokio::spawn(async move {
            text_of(&router, with_headers(method, uri, &[])).await.0
        }));
    }
    for call in calls {
        assert_eq!(call.await.unwrap(), StatusCode::OK);
    }
    assert_eq!(source.most.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_long_request_target_is_414_as_a_problem() {
    let uri = format!("/api/v1/decode/1?layout={}", "x".repeat(9000));
    let reply = send_with(
        &config(),
        Request::get(uri.as_str()).body(Body::empty()).unwrap(),
    )
    .await;
    assert_problem(
        &reply,
        StatusCode::URI_TOO_LONG,
        None,
        "longer than 8192 bytes",
    );
}

/// The limits are where the code and the README put them: a request
/// target of 8,192 bytes is served and one more byte is refused; a body
/// declared at 512 KiB is read and one declared a byte longer is refused
/// before it is read.
#[tokio::test]
async fn the_limits_fall_exactly_where_stated() {
    let prefix = "/api/v1/decode/1?layout=";
    for (len, refused) in [(8192, false), (8193, true)] {
        let uri = format!("{prefix}{}", "x".repeat(len - prefix.len()));
        assert_eq!(uri.len(), len);
        let reply = send_with(
            &config(),
            Request::get(uri.as_str()).body(Body::empty()).unwrap(),
        )
        .await;
        // Served: the layout is unknown, a 400; refused: a 414.
        let expected = if refused {
            StatusCode::URI_TOO_LONG
        } else {
            StatusCode::BAD_REQUEST
        };
        assert_eq!(reply.status, expected, "a target of {len} bytes");
    }
    for (len, refused) in [(512 * 1024, false), (512 * 1024 + 1, true)] {
        let request = Request::post("/api/v1/decode")
            .header(header::CONTENT_TYPE, "text/plain")
            .header(header::CONTENT_LENGTH, len.to_string())
            .body(Body::from(vec![b' '; len]))
            .unwrap();
        let reply = send_with(&config(), request).await;
        let expected = if refused {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::OK
        };
        assert_eq!(
            reply.status,
            expected,
            "a body declared at {len} bytes: {}",
            reply.text()
        );
    }
}

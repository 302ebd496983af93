//! Which origins may use the IDs route (CORS), and which host names a
//! loopback service answers to.

use axum::http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake_server::app;
use tower::ServiceExt;

use crate::support::*;

#[tokio::test]
async fn foreign_pages_cannot_use_ids_up_unless_allowed() {
    let source = standalone();
    let config = config().with_cors_origins(vec!["https://app.example".into()]);
    let router = app(source.clone(), &config);
    let before = source.generator().stats().issued;
    let host = ("host", "localhost:8080");
    for method in [Method::POST, Method::GET] {
        let request = with_headers(
            method.clone(),
            "/api/v1/ids?count=500",
            &[host, ("origin", "https://evil.example")],
        );
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{method}");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/problem+json"
        );
        assert!(
            !response
                .headers()
                .contains_key("access-control-allow-origin")
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert!(
            v["detail"].as_str().unwrap().contains("evil.example"),
            "{v}"
        );
    }
    assert_eq!(
        source.generator().stats().issued,
        before,
        "refused, yet issued"
    );
    // A refused preflight too.
    let (status, _) = text_of(
        &router,
        with_headers(
            Method::OPTIONS,
            "/api/v1/ids",
            &[
                host,
                ("origin", "https://evil.example"),
                ("access-control-request-method", "POST"),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The service's own page, and a page with no Origin at all (curl).
    for headers in [vec![host, ("origin", "http://localhost:8080")], vec![host]] {
        let (status, body) =
            text_of(&router, with_headers(Method::POST, "/api/v1/ids", &headers)).await;
        assert_eq!(status, StatusCode::OK, "{headers:?}: {body}");
    }
    // The allowed origin, with its CORS headers, and its preflight.
    let request = with_headers(
        Method::POST,
        "/api/v1/ids?count=2",
        &[host, ("origin", "https://app.example")],
    );
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    let request = with_headers(
        Method::OPTIONS,
        "/api/v1/ids",
        &[
            host,
            ("origin", "https://app.example"),
            ("access-control-request-method", "POST"),
        ],
    );
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    assert!(
        response.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    // Routes that issue nothing are not refused.
    let (status, _) = text_of(
        &router,
        with_headers(
            Method::GET,
            "/api/v1/decode/1",
            &[host, ("origin", "https://evil.example")],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

/// `target` asked for with these `Host` headers: the status and body.
async fn get_under(router: &axum::Router, target: &str, hosts: &[&str]) -> (StatusCode, String) {
    let headers: Vec<(&str, &str)> = hosts.iter().map(|host| ("host", *host)).collect();
    text_of(router, with_headers(Method::GET, target, &headers)).await
}

#[tokio::test]
async fn a_loopback_service_answers_only_to_loopback_names() {
    let loopback = config()
        .with_loopback_hosts_only(true)
        .with_allowed_hosts(vec!["snowflake.internal".into()]);
    let router = app(standalone(), &loopback);
    for host in [
        "evil.example",
        "evil.example:8080",
        "127.0.0.1.evil.example:80",
        "10.1.2.3",
    ] {
        let (status, body) = get_under(&router, "/healthz", &[host]).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], 421, "{body}");
    }
    for host in [
        "localhost",
        "localhost:8080",
        "127.0.0.1:8080",
        "127.9.9.9",
        "[::1]:8080",
        "[::1]",
        "snowflake.internal:8080",
        "SNOWFLAKE.internal",
    ] {
        let (status, body) = get_under(&router, "/healthz", &[host]).await;
        assert_eq!(status, StatusCode::OK, "{host}: {body}");
    }
    // Without the check (a service on a public address) any name will do.
    let router = app(standalone(), &config());
    let (status, _) = get_under(&router, "/healthz", &["evil.example"]).await;
    assert_eq!(status, StatusCode::OK);
}

/// The host that counts is the target's when the target is in absolute
/// form (RFC 9112, 3.2.2), so a foreign name cannot hide behind a loopback
/// `Host` header; two `Host` headers are refused whatever the address.
#[tokio::test]
async fn an_absolute_target_or_two_hosts_cannot_sneak_past_the_host_check() {
    let loopback = config().with_loopback_hosts_only(true);
    let router = app(standalone(), &loopback);
    let (status, body) = get_under(&router, "http://evil.example/api/v1/ids", &["127.0.0.1"]).await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{body}");
    assert!(body.contains("evil.example"), "{body}");
    let (status, body) = get_under(
        &router,
        "http://127.0.0.1:8080/api/v1/ids",
        &["evil.example"],
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the target's own host counts: {body}"
    );
    for config in [loopback, config()] {
        let router = app(standalone(), &config);
        let (status, body) =
            get_under(&router, "/api/v1/ids", &["127.0.0.1", "evil.example"]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(
            v["detail"]
                .as_str()
                .unwrap()
                .contains("more than one Host header"),
            "{body}"
        );
    }
}

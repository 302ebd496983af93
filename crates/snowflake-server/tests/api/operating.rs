//! What operators see: health, readiness, metrics, the OpenAPI document,
//! and the logs of server errors and panics.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake_server::{Config, app};
use tower::ServiceExt;

use crate::support::*;

#[tokio::test]
async fn generic_errors_are_problems_too() {
    assert_problem(
        &get("/api/v1/nope").await,
        StatusCode::NOT_FOUND,
        None,
        "no such route",
    );
    let request = Request::builder()
        .method(Method::DELETE)
        .uri("/api/v1/layouts")
        .body(Body::empty())
        .unwrap();
    let reply = send_with(&config(), request).await;
    assert_problem(&reply, StatusCode::METHOD_NOT_ALLOWED, None, "method");
    assert!(reply.headers.contains_key(header::ALLOW));
    let request = Request::post("/api/v1/ids")
        .header(header::CONTENT_LENGTH, "600000")
        .body(Body::from(vec![b'x'; 600_000]))
        .unwrap();
    assert_problem(
        &send_with(&config(), request).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        "too large",
    );
    // Bytes that are not UTF-8 arrive replaced, and are reported as such.
    assert_problem(
        &get("/api/v1/compose?machine=%FF").await,
        StatusCode::BAD_REQUEST,
        Some("machine"),
        "is not a whole number",
    );
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    assert_eq!(get("/healthz").await.json()["status"], "ok");
    assert_eq!(get("/readyz").await.json()["status"], "ready");
    let config = config();
    let router = app(standalone(), &config);
    // The second and third 200 of the IDs route are counted through the
    // handles its layer remembered from the first.
    for uri in [
        "/api/v1/ids?count=7",
        "/api/v1/ids",
        "/api/v1/ids?count=0",
        "/api/v1/ids?count=2",
        "/api/v1/compose?machine=99",
    ] {
        get_from(&router, uri).await;
    }
    let (_, text) = get_from(&router, "/metrics").await;
    for needle in [
        "snowflake_ids_issued_total",
        "snowflake_clock_backwards_total",
        "snowflake_sequence_exhaustion_waits_total",
        "http_requests_total{route=\"/api/v1/compose\",method=\"GET\",status=\"400\"}",
        "http_request_duration_seconds_bucket{route=\"/api/v1/ids\"",
        "http_requests_total{route=\"/api/v1/ids\",method=\"GET\",status=\"200\"} 3\n",
        "http_requests_total{route=\"/api/v1/ids\",method=\"GET\",status=\"400\"} 1\n",
        "http_request_duration_seconds_count{route=\"/api/v1/ids\",method=\"GET\",status=\"200\"} 3\n",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

#[tokio::test]
async fn openapi_describes_every_route() {
    let doc = get("/api/v1/openapi.json").await.json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for path in [
        "/api/v1/compose",
        "/api/v1/decode/{id}",
        "/api/v1/decode",
        "/api/v1/bounds",
        "/api/v1/layouts",
        "/api/v1/ids",
        "/api/v1/openapi.json",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} missing");
    }
}

/// An answer of 500 or above is logged with its route and status at the
/// default level, where the request trace is off; other answers are not.
#[tokio::test]
async fn server_errors_are_logged_at_the_default_level() {
    use std::sync::atomic::Ordering::SeqCst;
    let (logs, _default) = Captured::at_info();
    let source = FakeSource::new();
    let router = app(source.clone(), &config());
    let call = |uri: &'static str| {
        let router = router.clone();
        async move { get_from(&router, uri).await.0 }
    };
    assert_eq!(call("/api/v1/ids").await, StatusCode::OK);
    assert_eq!(call("/api/v1/nothing-here").await, StatusCode::NOT_FOUND);
    assert_eq!(logs.text(), "", "a 200 and a 404 are not logged");
    source.refuse.store(true, SeqCst);
    assert_eq!(call("/api/v1/ids").await, StatusCode::SERVICE_UNAVAILABLE);
    let text = logs.text();
    assert!(
        text.contains("ERROR")
            && text.contains("answered with a server error")
            && text.contains("route=\"/api/v1/ids\"")
            && text.contains("status=503"),
        "{text}"
    );
}

/// A panic in a route is a 500 in problem+json without detail, counted and
/// logged with its message, and the service goes on answering: with one
/// turn for the whole server, the next request proves the panicking
/// request gave its turn back.
#[tokio::test]
async fn a_panic_in_a_route_is_a_500_and_the_service_goes_on() {
    use std::sync::atomic::Ordering::SeqCst;
    let (logs, _default) = Captured::at_info();
    let source = FakeSource::new();
    let config = config().with_max_concurrency(1);
    let router = app(source.clone(), &config);
    let call = |uri: &'static str| {
        let router = router.clone();
        async move {
            let request = Request::post(uri).body(Body::empty()).unwrap();
            let response = router.oneshot(request).await.unwrap();
            let status = response.status();
            let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (
                status,
                content_type,
                String::from_utf8(body.to_vec()).unwrap(),
            )
        }
    };
    source.panic.store(true, SeqCst);
    let (status, content_type, body) = call("/api/v1/ids").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert_eq!(content_type.unwrap(), "application/problem+json", "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["detail"], "internal server error");
    assert!(!body.contains("a bug in the source"), "{body}");
    let text = logs.text();
    assert!(
        text.contains("ERROR")
            && text.contains("a route panicked")
            && text.contains("a bug in the source"),
        "{text}"
    );
    source.panic.store(false, SeqCst);
    let (status, _, body) = call("/api/v1/ids").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, metrics) = get_from(&router, "/metrics").await;
    assert!(
        metrics
            .contains(r#"http_requests_total{route="/api/v1/ids",method="POST",status="500"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn made_up_methods_and_paths_do_not_grow_the_metrics() {
    // Its own state, so its own registry: other tests' requests do not count.
    let router = app(standalone(), &config());
    let metrics = || Request::get("/metrics").body(Body::empty()).unwrap();
    let send = |method: &str, path: String| {
        Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(path)
            .body(Body::empty())
            .unwrap()
    };
    // Every label a request below can produce, once.
    for method in [
        "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "MADEUP",
    ] {
        text_of(&router, send(method, "/nowhere".into())).await;
    }
    text_of(&router, metrics()).await;
    let (_, before) = text_of(&router, metrics()).await;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in 0..10_000 {
        let method = match n % 4 {
            0 => ["GET", "POST", "PUT", "DELETE", "PATCH"][(rng.next() % 5) as usize].to_string(),
            _ => rng.token(),
        };
        let path = format!("/{}/{}", rng.token(), rng.token());
        let (status, _) = text_of(&router, send(&method, path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    let (_, after) = text_of(&router, metrics()).await;
    let series = |text: &str| text.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(series(&after), series(&before), "new series:\n{after}");
    assert!(
        after.contains("http_requests_total{route=\"unmatched\",method=\"other\",status=\"404\"}"),
        "{after}"
    );
    assert!(
        after.len() < before.len() + 1024,
        "{} → {}",
        before.len(),
        after.len()
    );
}

/// `/readyz` says what the kernel says of the clock and how long the layout
/// has left; by default an unsynchronised clock is reported, not refused.
/// Required in sync, readiness fails while the kernel says otherwise or the
/// error is above the bound, and recovers when it is within it.
#[tokio::test]
async fn readiness_reports_the_clock_and_fails_on_it_only_when_required() {
    use snowflake_server::KernelClock;
    use std::sync::Mutex;
    let reading = Arc::new(Mutex::new(KernelClock {
        synchronised: false,
        max_error_ms: 16000.0,
        estimated_error_ms: 16000.0,
        offset_ms: 0.0,
    }));
    let fake = {
        let reading = Arc::clone(&reading);
        Arc::new(move || Some(*reading.lock().unwrap())) as snowflake_server::KernelClockReader
    };
    let readyz = |config: Config| async move {
        let router = app(standalone(), &config);
        let (status, body) = get_from(&router, "/readyz").await;
        (status, serde_json::from_str::<Value>(&body).unwrap())
    };
    // Reported only.
    let (status, v) = readyz(config().with_kernel_clock(fake.clone())).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["clock"]["synchronised"], false);
    assert_eq!(v["clock"]["max_error_ms"], 16000.0);
    let left = &v["time_left"];
    assert_eq!(left["runs_out"], "2080-07-10T17:30:30.209Z", "{v}");
    assert!(left["years_left"].as_f64().unwrap() > 50.0, "{v}");
    assert_eq!(left["short"], false);
    // Required within 100 ms.
    let required = || {
        config()
            .with_kernel_clock(fake.clone())
            .with_require_clock_sync(Some(100))
    };
    let (status, v) = readyz(required()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    assert!(
        v["detail"].as_str().unwrap().contains("not synchronised"),
        "{v}"
    );
    *reading.lock().unwrap() = KernelClock {
        synchronised: true,
        max_error_ms: 250.0,
        estimated_error_ms: 3.0,
        offset_ms: 0.2,
    };
    let (status, v) = readyz(required()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    assert!(v["detail"].as_str().unwrap().contains("250 ms"), "{v}");
    reading.lock().unwrap().max_error_ms = 40.0;
    let (status, v) = readyz(required()).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["clock"]["synchronised"], true);
    // Metrics carry the same.
    let router = app(standalone(), &config().with_kernel_clock(fake));
    let (_, metrics) = get_from(&router, "/metrics").await;
    for needle in [
        "snowflake_clock_synchronised 1",
        "snowflake_clock_max_error_seconds 0.04",
        "snowflake_layout_time_left_seconds ",
    ] {
        assert!(metrics.contains(needle), "{needle} in {metrics}");
    }
}

/// A layout with less than a year left says so in `/readyz`.
#[tokio::test]
async fn readiness_says_when_the_layout_runs_out_within_a_year() {
    // 2^35 ms is about 1.09 years: an epoch a year before the clock's now
    // leaves about a month.
    let clock: Arc<dyn snowflake::Clock> = Arc::new(snowflake::ManualClock::new(1_700_000_000_000));
    let layout = snowflake::Layout::parse("time:35,node:8,sequence:12")
        .unwrap()
        .with_epoch_ms(1_700_000_000_000 - 365 * 86_400_000)
        .unwrap();
    let generator = snowflake::Generator::builder(layout)
        .node(&[("node", 1)])
        .clock(clock)
        .build()
        .unwrap();
    let router = app(snowflake_server::Standalone::new(generator), &config());
    let (status, body) = get_from(&router, "/readyz").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["time_left"]["short"], true, "{v}");
    assert!(v["time_left"]["years_left"].as_f64().unwrap() < 1.0, "{v}");
}

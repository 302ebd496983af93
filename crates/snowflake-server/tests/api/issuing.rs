//! The IDs route: what it hands out, and every reason it refuses to (a
//! source that may not issue, a clock behind or before the epoch, a mark
//! that cannot be stored).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake::{Clock, Generator, Layout, MarkStore, SystemClock};
use snowflake_server::{Standalone, app};
use snowflake_store::FileMarkStore;
use tower::ServiceExt;

use crate::support::*;

#[tokio::test]
async fn ids_come_from_this_node_strictly_increasing() {
    let config = config();
    let source = standalone();
    let state = source.clone();
    let router = app(state, &config);
    let mut all = Vec::new();
    for _ in 0..3 {
        let request = Request::post("/api/v1/ids?count=5000")
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["layout"], "twitter");
        for id in v["ids"].as_array().unwrap() {
            all.push(id.as_str().unwrap().parse::<u64>().unwrap());
        }
    }
    assert_eq!(all.len(), 15000);
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    let twitter = Layout::twitter();
    let d = twitter.decode(all[0].into()).unwrap();
    assert_eq!(
        (d.field("datacenter"), d.field("machine")),
        (Some(2), Some(5))
    );
    assert_eq!(source.generator().stats().issued, 15000);
}

#[tokio::test]
async fn ids_default_count_plain_text_and_limits() {
    let reply = get("/api/v1/ids").await;
    assert_eq!(reply.json()["ids"].as_array().unwrap().len(), 1);
    let request = Request::get("/api/v1/ids?count=3")
        .header(header::ACCEPT, "text/plain")
        .body(Body::empty())
        .unwrap();
    let reply = send_with(&config(), request).await;
    assert!(reply.content_type.starts_with("text/plain"));
    assert_eq!(reply.text().lines().count(), 3);
    let reply = get("/api/v1/ids?count=100000").await;
    assert_eq!(reply.json()["ids"].as_array().unwrap().len(), 100_000);
    for bad in ["0", "100001", "-1", "x"] {
        assert_problem(
            &get(&format!("/api/v1/ids?count={bad}")).await,
            StatusCode::BAD_REQUEST,
            Some("count"),
            "a count is 1 to 100000",
        );
    }
}

/// What `Accept` asks for decides the body, by q-values and wildcards; a
/// header that takes neither JSON nor text is a 406 that issues nothing.
#[tokio::test]
async fn accept_is_negotiated_and_nothing_acceptable_is_406() {
    let source = standalone();
    let router = app(source.clone(), &config());
    let ask = |accept: &'static str| {
        let router = router.clone();
        async move {
            let request = with_headers(Method::GET, "/api/v1/ids?count=2", &[("accept", accept)]);
            Reply::of(router.oneshot(request).await.unwrap()).await
        }
    };
    for (accept, content_type) in [
        ("*/*", "application/json"),
        ("text/*", "text/plain; charset=utf-8"),
        (
            "application/json;q=0.5, text/plain",
            "text/plain; charset=utf-8",
        ),
        ("text/plain;q=0.5, application/json", "application/json"),
        ("text/html, */*;q=0.8", "application/json"),
    ] {
        let reply = ask(accept).await;
        assert_eq!(reply.status, StatusCode::OK, "{accept}");
        assert_eq!(reply.content_type, content_type, "{accept}");
    }
    let before = source.generator().stats().issued;
    let reply = ask("image/png").await;
    assert_problem(
        &reply,
        StatusCode::NOT_ACCEPTABLE,
        Some("accept"),
        "this route writes application/json or text/plain; the Accept header \"image/png\" takes none of them",
    );
    assert_eq!(
        source.generator().stats().issued,
        before,
        "a 406 issued IDs"
    );
}

#[tokio::test]
async fn a_mark_far_ahead_of_the_clock_refuses_to_start() {
    // A state file whose mark lies an hour ahead: the generator refuses to
    // start, so the service cannot be built with it at all.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mark");
    let ahead = snowflake::Clock::now_ms(&snowflake::SystemClock) + 3_600_000;
    std::fs::write(&path, format!("{ahead}\n")).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let err = Generator::builder(Layout::twitter())
        .node(&NODE)
        .clock(clock)
        .store(FileMarkStore::new(&path))
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("behind the high-water mark"),
        "{err}"
    );
}

/// The clock steps back beyond the tolerance: not ready, and IDs are a 503
/// that says why, until the clock catches up.
#[tokio::test]
async fn clock_far_behind_is_503_until_it_catches_up() {
    let clock = Arc::new(snowflake::ManualClock::new(1_700_000_000_000));
    let config = config();
    let source = Standalone::new(generator_on(clock.clone()));
    let router = app(source, &config);
    let call = |uri: &'static str| {
        let router = router.clone();
        async move {
            let response = router
                .oneshot(Request::post(uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
            let status = response.status();
            let retry = response.headers().get(header::RETRY_AFTER).cloned();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (
                status,
                retry,
                serde_json::from_slice::<Value>(&body).unwrap(),
            )
        }
    };
    assert_eq!(call("/api/v1/ids").await.0, StatusCode::OK);
    clock.advance(-2_000);
    let (status, retry, problem) = call("/api/v1/ids").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(retry.is_some());
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("backwards by 2000 ms")
    );
    let response = router
        .clone()
        .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    clock.advance(2_001);
    assert_eq!(call("/api/v1/ids").await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_source_that_cannot_issue_is_503_with_a_fixed_message() {
    use std::sync::atomic::Ordering::SeqCst;
    let source = FakeSource::new();
    let router = app(source.clone(), &config());
    let call = |method: Method, uri: &'static str| {
        let router = router.clone();
        async move {
            let request = Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::empty())
                .unwrap();
            let response = router.oneshot(request).await.unwrap();
            let status = response.status();
            let retry = response.headers().get(header::RETRY_AFTER).cloned();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, retry, String::from_utf8(body.to_vec()).unwrap())
        }
    };
    // Ready, and the source's own status fields are printed as given.
    let (status, _, body) = call(Method::GET, "/readyz").await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "ready");
    assert_eq!(v["slot"], "datacenter=2,machine=5");

    source.refuse.store(true, SeqCst);
    for (method, uri) in [
        (Method::GET, "/readyz"),
        (Method::POST, "/api/v1/ids"),
        (Method::POST, "/api/v1/ids?count=5000"),
    ] {
        let (status, retry, body) = call(method, uri).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{uri}: {body}");
        assert!(retry.is_some(), "{uri}: no Retry-After");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], 503);
        assert!(
            v["detail"]
                .as_str()
                .unwrap()
                .contains("cannot issue IDs right now"),
            "{body}"
        );
        assert!(
            !body.contains("10.9.8.7") && !body.contains("secret"),
            "{body}"
        );
    }
    // Composing and decoding need no generator: they still work.
    let (status, _, _) = call(Method::GET, "/api/v1/compose?timestamp=1288834975657").await;
    assert_eq!(status, StatusCode::OK);

    // IDs made while the permission lapsed are not handed out.
    source.refuse.store(false, SeqCst);
    source.revoke_after_issue.store(true, SeqCst);
    let before = source.generator.stats().issued;
    let (status, _, body) = call(Method::POST, "/api/v1/ids?count=3").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(!body.contains("\"ids\""), "{body}");
    assert_eq!(
        source.generator.stats().issued,
        before + 3,
        "made, then withheld"
    );
    source.revoke_after_issue.store(false, SeqCst);
    let (status, _, _) = call(Method::POST, "/api/v1/ids?count=3").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn head_never_issues_ids() {
    let source = standalone();
    let router = app(source.clone(), &config());
    let before = source.generator().stats().issued;
    for uri in ["/api/v1/ids?count=100000", "/api/v1/ids"] {
        let request = Request::head(uri).body(Body::empty()).unwrap();
        let reply = Reply::of(router.clone().oneshot(request).await.unwrap()).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{uri}");
        // The methods that do issue, as the route declares them.
        assert_eq!(reply.headers[header::ALLOW], "GET,POST", "{uri}");
    }
    assert_eq!(source.generator().stats().issued, before, "HEAD issued IDs");
    // The page and the API's other routes still answer HEAD.
    let (status, _) = text_of(
        &router,
        Request::head("/healthz").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_clock_before_the_epoch_is_503_and_blames_no_parameter() {
    let layout = Layout::twitter().with_epoch_ms(4_102_444_800_000).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let generator = Generator::builder(layout).clock(clock).build().unwrap();
    let router = app(Standalone::new(generator), &config());
    for uri in ["/api/v1/ids", "/api/v1/ids?count=9000", "/readyz"] {
        let response = router
            .clone()
            .oneshot(Request::get(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{uri}");
        // Waiting does not help: no Retry-After.
        assert!(
            !response.headers().contains_key(header::RETRY_AFTER),
            "{uri}"
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert!(v.get("field").is_none(), "{uri}: {v}");
        assert!(
            !v["detail"].as_str().unwrap().contains("timestamp"),
            "{uri}: {v}"
        );
    }
}

/// A mark store that fails while told to, as a full disk does.
#[derive(Default)]
struct Flaky {
    failing: std::sync::atomic::AtomicBool,
}

impl MarkStore for Flaky {
    fn load(&self) -> Result<Option<i64>, snowflake::Error> {
        Ok(None)
    }

    fn save(&self, _mark_ms: i64) -> Result<(), snowflake::Error> {
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(snowflake::Error::store_failure("no space left on device"));
        }
        Ok(())
    }
}

/// The service over a generator of [`NODE`] whose mark goes to `store`,
/// topped up every few milliseconds (a reserve of 2 ms).
fn over_store(store: impl MarkStore + 'static) -> Router {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let generator = Generator::builder(Layout::twitter())
        .node(&NODE)
        .clock(clock)
        .store(store)
        .reserve_ms(2)
        .build()
        .unwrap();
    app(Standalone::new(generator), &config())
}

/// A GET through `router`: its status, and whether it says when to retry.
async fn call(router: &Router, uri: &str) -> (StatusCode, bool) {
    let response = router
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    (
        response.status(),
        response.headers().contains_key(header::RETRY_AFTER),
    )
}

/// The first answer to `GET /api/v1/ids` that is a 503, asked up to 200
/// times a millisecond apart: with the mark topped up every few
/// milliseconds, a write is due and fails well within that.
async fn first_refusal(router: &Router) -> Option<(StatusCode, bool)> {
    for _ in 0..200 {
        let answer = call(router, "/api/v1/ids").await;
        if answer.0 == StatusCode::SERVICE_UNAVAILABLE {
            return Some(answer);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    None
}

/// A store that cannot write for a while (a full disk): IDs are a 503 that
/// asks to retry, readiness fails, and both recover without a restart once
/// the store works again.
#[tokio::test]
async fn a_store_that_fails_for_a_while_fails_readiness_until_it_works() {
    use std::sync::atomic::Ordering::SeqCst;
    let store = Arc::new(Flaky::default());
    let router = over_store(Arc::clone(&store));
    assert_eq!(call(&router, "/api/v1/ids").await.0, StatusCode::OK);
    store.failing.store(true, SeqCst);
    assert_eq!(
        first_refusal(&router).await,
        Some((StatusCode::SERVICE_UNAVAILABLE, true)),
        "issuing never failed, or failed without Retry-After"
    );
    assert_eq!(
        call(&router, "/readyz").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    store.failing.store(false, SeqCst);
    assert_eq!(call(&router, "/readyz").await.0, StatusCode::OK);
    assert_eq!(call(&router, "/api/v1/ids").await.0, StatusCode::OK);
}

/// A state file whose directory went away, lock file and all: another
/// process may hold it now, so the node stops issuing for good, says so
/// without Retry-After, and stays stopped when the directory comes back.
#[tokio::test]
async fn a_state_file_that_went_away_stops_issuing_until_the_operator_acts() {
    let dir = tempfile::tempdir().unwrap();
    let router = over_store(FileMarkStore::new(dir.path().join("mark")));
    assert_eq!(call(&router, "/api/v1/ids").await.0, StatusCode::OK);
    assert_eq!(call(&router, "/readyz").await.0, StatusCode::OK);
    std::fs::remove_dir_all(dir.path()).unwrap();
    assert!(
        first_refusal(&router).await.is_some(),
        "issuing never failed after the directory went"
    );
    // The first failure may be the write itself; once the store sees its
    // lock file gone, the refusal is for good and asks no one to retry.
    std::fs::create_dir_all(dir.path()).unwrap();
    call(&router, "/api/v1/ids").await;
    assert_eq!(
        call(&router, "/readyz").await,
        (StatusCode::SERVICE_UNAVAILABLE, false)
    );
    assert_eq!(
        call(&router, "/api/v1/ids").await,
        (StatusCode::SERVICE_UNAVAILABLE, false)
    );
}

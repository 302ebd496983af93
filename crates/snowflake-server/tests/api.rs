//! Every route and every error class, through the router in process.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake::{Clock, FileMarkStore, Generator, Layout, SharedGenerator, SystemClock};
use snowflake_server::{AppState, Config, IdSource, Standalone, app};
use tower::ServiceExt;

struct Reply {
    status: StatusCode,
    content_type: String,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

fn config() -> Config {
    Config::default()
}

/// The node every test issues as: datacenter 2, machine 5.
const NODE: [(&str, u64); 2] = [("datacenter", 2), ("machine", 5)];

fn generator_on(clock: Arc<dyn Clock>) -> SharedGenerator {
    Generator::builder(Layout::twitter())
        .node(&NODE)
        .clock(clock)
        .build()
        .unwrap()
}

fn standalone() -> Arc<Standalone> {
    Standalone::new(generator_on(Arc::new(SystemClock)))
}

async fn send_with(config: &Config, request: Request<Body>) -> Reply {
    let router = app(Arc::new(AppState::new(standalone())), config);
    let response = router.oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        content_type,
        headers,
        body,
    }
}

async fn get(uri: &str) -> Reply {
    send_with(&config(), Request::get(uri).body(Body::empty()).unwrap()).await
}

fn assert_problem(reply: &Reply, status: StatusCode, field: Option<&str>, detail: &str) {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert_eq!(reply.content_type, "application/problem+json");
    let p = reply.json();
    assert_eq!(p["status"], status.as_u16());
    assert!(p["type"].as_str().unwrap().starts_with("https://"));
    assert!(p["title"].is_string());
    assert!(
        p["detail"].as_str().unwrap().contains(detail),
        "{} does not contain {detail}",
        p["detail"]
    );
    match field {
        Some(field) => assert_eq!(p["field"], field),
        None => assert!(p.get("field").is_none()),
    }
}

#[tokio::test]
async fn compose_worked_example_is_the_cli_json() {
    let reply =
        get("/api/v1/compose?timestamp=1288834975657&datacenter=1&machine=1&sequence=0").await;
    assert_eq!(reply.status, StatusCode::OK);
    let twitter = Layout::twitter();
    let expected = serde_json::to_value(twitter.decode(4194439168.into()).unwrap()).unwrap();
    assert_eq!(reply.json(), expected);
}

#[tokio::test]
async fn compose_follows_the_layout_and_defaults_to_now() {
    let reply = get(
        "/api/v1/compose?layout=discord&timestamp=1462015105796&worker=1&process=0&increment=7",
    )
    .await;
    assert_eq!(reply.json()["id"], "175928847299117063");
    let reply = get("/api/v1/compose?machine=3").await;
    let ts = reply.json()["timestamp_ms"].as_i64().unwrap();
    let now = snowflake::Clock::now_ms(&snowflake::SystemClock);
    assert!((now - ts).abs() < 60_000);
    // An empty parameter, as an empty form field sends, means 0.
    let reply = get("/api/v1/compose?timestamp=1288834975657&machine=&datacenter=1").await;
    assert_eq!(reply.json()["fields"]["machine"], 0);
}

#[tokio::test]
async fn compose_errors_name_the_field() {
    let cases = [
        (
            "/api/v1/compose?machine=32",
            "machine",
            "machine 32 is out of range: 0 to 31 (5 bits)",
        ),
        (
            "/api/v1/compose?machine=-1",
            "machine",
            "machine -1 is out of range: 0 to 31",
        ),
        (
            "/api/v1/compose?datacenter=x",
            "datacenter",
            "is not a whole number",
        ),
        (
            "/api/v1/compose?worker=1",
            "worker",
            "its fields are datacenter, machine, sequence",
        ),
        (
            "/api/v1/compose?timestamp=1288834974656",
            "timestamp",
            "before the layout's epoch",
        ),
        (
            "/api/v1/compose?timestamp=3487858230209",
            "timestamp",
            "2080-07-10T17:30:30.208Z",
        ),
        (
            "/api/v1/compose?timestamp=soon",
            "timestamp",
            "is not a time",
        ),
        ("/api/v1/compose?layout=flickr", "layout", "unknown layout"),
        (
            "/api/v1/compose?layout=time:41,x:30",
            "layout",
            "add up to 71 bits; an ID holds at most 64",
        ),
        (
            "/api/v1/compose?tick_ms=0",
            "tick_ms",
            "tick_ms 0 is not allowed",
        ),
    ];
    for (uri, field, detail) in cases {
        assert_problem(
            &get(uri).await,
            StatusCode::BAD_REQUEST,
            Some(field),
            detail,
        );
    }
}

#[tokio::test]
async fn parameters_given_twice_or_not_taken_are_refused() {
    // As the CLI refuses a field given twice.
    assert_problem(
        &get("/api/v1/compose?machine=1&machine=2").await,
        StatusCode::BAD_REQUEST,
        Some("machine"),
        "given more than once",
    );
    assert_problem(
        &get("/api/v1/ids?layout=discord").await,
        StatusCode::BAD_REQUEST,
        Some("layout"),
        "takes no parameter \"layout\"; it takes count",
    );
    assert_problem(
        &get("/api/v1/decode/1?machine=1").await,
        StatusCode::BAD_REQUEST,
        Some("machine"),
        "takes no parameter",
    );
}

#[tokio::test]
async fn decode_and_its_errors() {
    let reply = get("/api/v1/decode/1541815603606036480").await;
    let v = reply.json();
    assert_eq!(v["time"], "2022-06-28T16:07:40.105Z");
    assert_eq!(v["fields"]["machine"], 26);
    let reply = get("/api/v1/decode/175928847299117063?layout=discord").await;
    assert_eq!(reply.json()["timestamp_ms"], 1462015105796i64);
    assert_eq!(
        get("/api/v1/decode/0xfa021000").await.json()["id"],
        "4194439168"
    );
    assert_problem(
        &get("/api/v1/decode/18446744073709551616").await,
        StatusCode::BAD_REQUEST,
        Some("id"),
        "does not fit in 64 bits",
    );
    assert_problem(
        &get("/api/v1/decode/9223372036854775808").await,
        StatusCode::BAD_REQUEST,
        Some("id"),
        "sign bit",
    );
    assert_problem(
        &get("/api/v1/decode/abc").await,
        StatusCode::BAD_REQUEST,
        Some("id"),
        "id \"abc\" is not decimal: 'a' is not allowed",
    );
}

#[tokio::test]
async fn bounds_and_layouts() {
    let v = get("/api/v1/bounds?from=2010-11-04T01:42:55.657Z&to=1288834975657")
        .await
        .json();
    assert_eq!(v["first"], (1000u64 << 22).to_string());
    assert_eq!(v["last"], ((1000u64 << 22) | ((1 << 22) - 1)).to_string());
    assert_problem(
        &get("/api/v1/bounds?to=1").await,
        StatusCode::BAD_REQUEST,
        Some("from"),
        "from is required",
    );
    assert_problem(
        &get("/api/v1/bounds?from=2&to=1").await,
        StatusCode::BAD_REQUEST,
        Some("from"),
        "is after to",
    );
    let layouts = get("/api/v1/layouts").await.json();
    let names: Vec<&str> = layouts
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "twitter",
            "discord",
            "instagram",
            "sonyflake",
            "mastodon",
            "js53"
        ]
    );
    let js53 = &layouts[5];
    assert_eq!(
        (
            &js53["bits"],
            &js53["js_safe"],
            &js53["max_id"],
            &js53["epoch_ms"]
        ),
        (
            &Value::from(53),
            &Value::from(true),
            &Value::from("9007199254740991"),
            &Value::from(1704067200000i64)
        )
    );
    assert_eq!(layouts[1]["js_safe"], false);
}

#[tokio::test]
async fn ids_come_from_this_node_strictly_increasing() {
    let config = config();
    let source = standalone();
    let state = Arc::new(AppState::new(source.clone()));
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
async fn a_mark_far_ahead_of_the_clock_refuses_to_start() {
    // A state file whose mark lies an hour ahead: the generator refuses to
    // start, so the service cannot be built with it at all.
    let dir = std::env::temp_dir().join(format!("snowflake-server-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mark");
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
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The clock steps back beyond the tolerance: not ready, and IDs are a 503
/// that says why, until the clock catches up.
#[tokio::test]
async fn clock_far_behind_is_503_until_it_catches_up() {
    let clock = Arc::new(snowflake::ManualClock::new(1_700_000_000_000));
    let config = config();
    let source = Standalone::new(generator_on(clock.clone()));
    let router = app(Arc::new(AppState::new(source)), &config);
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
async fn health_readiness_and_metrics() {
    assert_eq!(get("/healthz").await.json()["status"], "ok");
    assert_eq!(get("/readyz").await.json()["status"], "ready");
    let config = config();
    let router = app(Arc::new(AppState::new(standalone())), &config);
    // The second and third 200 of the IDs route are counted through the
    // handles its layer remembered from the first.
    for uri in [
        "/api/v1/ids?count=7",
        "/api/v1/ids",
        "/api/v1/ids?count=0",
        "/api/v1/ids?count=2",
        "/api/v1/compose?machine=99",
    ] {
        let request = Request::get(uri).body(Body::empty()).unwrap();
        router.clone().oneshot(request).await.unwrap();
    }
    let request = Request::get("/metrics").body(Body::empty()).unwrap();
    let response = router.oneshot(request).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(body.to_vec()).unwrap();
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

#[tokio::test]
async fn page_is_served_in_the_browser_language() {
    let request = Request::get("/")
        .header(header::ACCEPT_LANGUAGE, "de-DE,de;q=0.9,en;q=0.5")
        .body(Body::empty())
        .unwrap();
    let reply = send_with(&config(), request).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.content_type.starts_with("text/html"));
    let html = reply.text();
    assert!(html.contains("lang=\"de\""), "{html}");
    // One self-contained document: nothing else to fetch.
    assert!(!html.contains("/assets/"), "{html}");
    assert_eq!(get("/assets/app.js").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_requests_time_out_as_problems() {
    // One request at a time; the first holds its turn for 50 ms (its source
    // is slow), the second may wait 20 ms: waiting for a turn counts.
    let source = Arc::new(SlowSource {
        inner: standalone(),
        inside: 0.into(),
        most: 0.into(),
    });
    let config = Config {
        request_timeout: Duration::from_millis(20),
        max_concurrency: 1,
        ..config()
    };
    let router = app(Arc::new(AppState::new(source.clone())), &config);
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
    let status = response.status();
    let content_type = response.headers()[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_string();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    let reply = Reply {
        status,
        content_type,
        headers: Default::default(),
        body,
    };
    assert_problem(&reply, StatusCode::REQUEST_TIMEOUT, None, "too long");
}

/// A source that holds a generator but may be told to refuse, or to revoke
/// its permission after IDs were made: what a leased slot does, without
/// etcd.
#[derive(Debug)]
struct FakeSource {
    generator: Arc<SharedGenerator>,
    layout: Layout,
    refuse: std::sync::atomic::AtomicBool,
    revoke_after_issue: std::sync::atomic::AtomicBool,
    /// `current` panics, as a bug in a source would.
    panic: std::sync::atomic::AtomicBool,
}

impl FakeSource {
    fn new() -> Arc<Self> {
        let generator = Arc::new(generator_on(Arc::new(SystemClock)));
        Arc::new(FakeSource {
            layout: generator.layout().clone(),
            generator,
            refuse: false.into(),
            revoke_after_issue: false.into(),
            panic: false.into(),
        })
    }
}

impl IdSource for FakeSource {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        self.generator.clock()
    }

    fn current(&self) -> Result<Arc<SharedGenerator>, snowflake_server::Unavailable> {
        assert!(
            !self.panic.load(std::sync::atomic::Ordering::SeqCst),
            "a bug in the source"
        );
        if self.refuse.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(snowflake_server::Unavailable::new(
                "cannot reach etcd at http://10.9.8.7:2379: secret detail",
            ));
        }
        Ok(Arc::clone(&self.generator))
    }

    fn still_valid(&self, _: &Arc<SharedGenerator>) -> bool {
        !self
            .revoke_after_issue
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    fn status(&self) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        map.insert("slot".into(), "datacenter=2,machine=5".into());
        map
    }

    fn shutdown(self: Arc<Self>) -> snowflake_server::Shutdown {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Log lines written to memory, for a test to read.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Captures this thread's log lines at level info and above until the
    /// guard is dropped.
    fn at_info() -> (Captured, tracing::subscriber::DefaultGuard) {
        let logs = Captured::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// An answer of 500 or above is logged with its route and status at the
/// default level, where the request trace is off; other answers are not.
#[tokio::test]
async fn server_errors_are_logged_at_the_default_level() {
    use std::sync::atomic::Ordering::SeqCst;
    let (logs, _default) = Captured::at_info();
    let source = FakeSource::new();
    let router = app(Arc::new(AppState::new(source.clone())), &config());
    let call = |uri: &'static str| {
        let router = router.clone();
        async move {
            let request = Request::get(uri).body(Body::empty()).unwrap();
            router.oneshot(request).await.unwrap().status()
        }
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
    let config = Config {
        max_concurrency: 1,
        ..config()
    };
    let router = app(Arc::new(AppState::new(source.clone())), &config);
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
    let request = Request::get("/metrics").body(Body::empty()).unwrap();
    let response = router.oneshot(request).await.unwrap();
    let metrics = response.into_body().collect().await.unwrap().to_bytes();
    let metrics = String::from_utf8(metrics.to_vec()).unwrap();
    assert!(
        metrics
            .contains(r#"http_requests_total{route="/api/v1/ids",method="POST",status="500"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_source_that_cannot_issue_is_503_with_a_fixed_message() {
    use std::sync::atomic::Ordering::SeqCst;
    let source = FakeSource::new();
    let router = app(Arc::new(AppState::new(source.clone())), &config());
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

async fn post(uri: &str, content_type: &str, accept: &str, body: impl Into<Body>) -> Reply {
    let request = Request::post(uri)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::ACCEPT, accept)
        .body(body.into())
        .unwrap();
    send_with(&config(), request).await
}

#[tokio::test]
async fn text_forms_in_breakdowns_and_on_the_ids_and_decode_routes() {
    use snowflake::{Id, TextForm};
    let v = get("/api/v1/decode/4194439168").await.json();
    assert_eq!(
        v["text"],
        serde_json::json!({"hex": "0xfa021000", "base32": "0000003X04400", "base62": "000004ZrREe", "base58": "7Pebdh"})
    );
    let v = get("/api/v1/decode/000004ZrREe?format=base62").await.json();
    assert_eq!(v["id"], "4194439168");
    assert_problem(
        &get("/api/v1/decode/1?format=base64").await,
        StatusCode::BAD_REQUEST,
        Some("format"),
        "format base64 is not allowed; a text form is decimal, hex, base32, base62 or base58",
    );
    let reply = send_with(
        &config(),
        Request::post("/api/v1/ids?count=50&format=base32")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    let ids: Vec<String> = reply.json()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 50);
    for pair in ids.windows(2) {
        assert_eq!(pair[0].len(), 13);
        assert!(pair[0] < pair[1], "{pair:?}");
        let (a, b) = (
            TextForm::Base32.parse(&pair[0]).unwrap(),
            TextForm::Base32.parse(&pair[1]).unwrap(),
        );
        assert!(a < b);
    }
    let request = Request::post("/api/v1/ids?count=3&format=base58")
        .header(header::ACCEPT, "text/plain")
        .body(Body::empty())
        .unwrap();
    let text = send_with(&config(), request).await.text();
    for line in text.lines() {
        let id: Id = TextForm::Base58.parse(line).unwrap();
        assert_eq!(id.to_text(TextForm::Base58), line);
    }
    assert_eq!(text.lines().count(), 3);
}

#[tokio::test]
async fn bulk_decode_answers_each_id_in_the_format_asked_for() {
    let twitter = Layout::twitter();
    let good = twitter.decode(1541815603606036480.into()).unwrap();
    let expected_good = serde_json::to_value(good).unwrap();

    // A JSON array in, a JSON array out, one record per ID, in order.
    let reply = post(
        "/api/v1/decode",
        "application/json",
        "application/json",
        r#"["1541815603606036480", "12ab", " 0xfa021000 ", "9223372036854775808"]"#,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.content_type, "application/json");
    let items = reply.json();
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0], expected_good);
    assert_eq!(items[1]["line"], 2);
    assert_eq!(items[1]["input"], "12ab");
    assert_eq!(items[1]["field"], "id");
    assert!(
        items[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("id \"12ab\" is not decimal")
    );
    assert_eq!(items[2]["id"], "4194439168");
    assert!(items[3]["error"].as_str().unwrap().contains("sign bit"));

    // Text in, NDJSON out.
    let reply = post(
        "/api/v1/decode?layout=discord",
        "text/plain",
        "application/x-ndjson",
        "175928847299117063\n\nnope 0x10\n",
    )
    .await;
    assert_eq!(reply.content_type, "application/x-ndjson");
    let lines: Vec<Value> = reply
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["timestamp_ms"], 1462015105796i64);
    assert_eq!(lines[1]["line"], 3);
    assert_eq!(lines[2]["id"], "16");

    // CSV, with the IDs read and written in base62.
    let id = snowflake::Id::new(1541815603606036480).to_text(snowflake::TextForm::Base62);
    let reply = post(
        "/api/v1/decode?format=base62",
        "text/plain",
        "text/csv",
        format!("{id}\n!\n"),
    )
    .await;
    assert_eq!(reply.content_type, "text/csv; charset=utf-8");
    let text = reply.text();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(
        rows[0],
        "line,id,timestamp_ms,time,datacenter,machine,sequence,error"
    );
    assert_eq!(
        rows[1],
        format!("1,{id},1656432460105,2022-06-28T16:07:40.105Z,11,26,0,")
    );
    assert!(
        rows[2].starts_with("2,!,,,,,,\"id \"\"!\"\" is not base62"),
        "{text}"
    );
}

#[tokio::test]
async fn bulk_decode_refuses_what_it_cannot_read() {
    // 10,000 IDs is the most; the largest form of each fits the body limit.
    let most: Vec<String> = (0..10_000u64).map(|i| (u64::MAX - i).to_string()).collect();
    let reply = post(
        "/api/v1/decode?layout=discord",
        "application/json",
        "application/json",
        serde_json::to_string(&most).unwrap(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json().as_array().unwrap().len(), 10_000);
    let reply = post(
        "/api/v1/decode",
        "text/plain",
        "application/json",
        most.join("\n"),
    )
    .await;
    assert_eq!(reply.json().as_array().unwrap().len(), 10_000);

    let too_many = "1\n".repeat(10_001);
    assert_problem(
        &post("/api/v1/decode", "text/plain", "application/json", too_many).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        Some("body"),
        "the body holds more than 10000 IDs; send at most 10000 a request",
    );
    let too_many = serde_json::to_string(&vec!["1"; 10_001]).unwrap();
    assert_problem(
        &post(
            "/api/v1/decode",
            "application/json",
            "application/json",
            too_many,
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        Some("body"),
        "more than 10000 IDs",
    );
    assert_problem(
        &post(
            "/api/v1/decode",
            "application/json",
            "application/json",
            r#"{"ids": [1]}"#,
        )
        .await,
        StatusCode::BAD_REQUEST,
        Some("body"),
        "the body is not a JSON array of strings",
    );
    assert_problem(
        &post(
            "/api/v1/decode?count=3",
            "text/plain",
            "application/json",
            "1",
        )
        .await,
        StatusCode::BAD_REQUEST,
        Some("count"),
        "this route takes no parameter \"count\"",
    );
    assert_problem(
        &post(
            "/api/v1/decode",
            "text/plain",
            "application/json",
            vec![b'1'; 600 * 1024],
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        "too large",
    );
}

#[tokio::test]
async fn layout_all_reads_an_id_under_every_preset_against_the_servers_clock() {
    // The service's clock, not the machine's, decides what is the future.
    let clock = Arc::new(snowflake::ManualClock::new(1_735_689_600_000)); // 2025-01-01
    let router = app(
        Arc::new(AppState::new(Standalone::new(generator_on(clock)))),
        &config(),
    );
    let request = Request::get("/api/v1/decode/175928847299117063?layout=all")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["now"], "2025-01-01T00:00:00.000Z");
    let verdicts: Vec<(&str, &str)> = v["readings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["layout"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("twitter", "possible"),
            ("discord", "possible"),
            ("instagram", "possible"),
            ("sonyflake", "possible"),
            ("mastodon", "implausible"),
            ("js53", "impossible"),
        ]
    );
    assert_eq!(v["readings"][1]["platform"], "Discord");
    assert_eq!(
        v["readings"][1]["decoded"]["time"],
        "2016-04-30T11:18:25.796Z"
    );
    assert_eq!(v["readings"][5]["decoded"], Value::Null);

    assert_problem(
        &get("/api/v1/decode/1?layout=all&epoch=0").await,
        StatusCode::BAD_REQUEST,
        Some("layout"),
        "all reads the ID under every preset as it is; leave out the epoch and the tick",
    );
    // The ID in another text form, read under every preset too.
    let v = get("/api/v1/decode/000004ZrREe?layout=ALL&format=base62")
        .await
        .json();
    assert_eq!(v["id"], "4194439168");
    assert_eq!(v["readings"].as_array().unwrap().len(), 6);
}

/// A small xorshift, so the random requests below need no dependency and a
/// failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn token(&mut self) -> String {
        let len = 1 + self.next() % 12;
        (0..len)
            .map(|_| (b'A' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

async fn text_of(router: &axum::Router, request: Request<Body>) -> (StatusCode, String) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn made_up_methods_and_paths_do_not_grow_the_metrics() {
    // Its own state, so its own registry: other tests' requests do not count.
    let router = app(Arc::new(AppState::new(standalone())), &config());
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

#[tokio::test]
async fn head_never_issues_ids() {
    let source = standalone();
    let router = app(Arc::new(AppState::new(source.clone())), &config());
    let before = source.generator().stats().issued;
    for uri in ["/api/v1/ids?count=100000", "/api/v1/ids"] {
        let (status, body) =
            text_of(&router, Request::head(uri).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{uri}: {body}");
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
async fn the_page_carries_its_policy_and_every_answer_nosniff() {
    let header = |reply: &Reply, name: &str| {
        reply
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let page = get("/").await;
    let csp = header(&page, "content-security-policy").expect("the page has no CSP header");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    // The page's own policy (scripts and styles by hash), with framing
    // refused, which only a header can say.
    assert!(
        csp.starts_with(snowflake_server::content_security_policy()),
        "{csp}"
    );
    assert_eq!(
        header(&page, "referrer-policy").as_deref(),
        Some("no-referrer")
    );
    assert_eq!(header(&page, "x-frame-options").as_deref(), Some("DENY"));
    for uri in ["/", "/api/v1/ids", "/nowhere", "/api/v1/compose?machine=99"] {
        let reply = get(uri).await;
        assert_eq!(
            header(&reply, "x-content-type-options").as_deref(),
            Some("nosniff"),
            "{uri}"
        );
    }
}

fn with_headers(method: Method, uri: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut request = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(Body::empty()).unwrap()
}

#[tokio::test]
async fn foreign_pages_cannot_use_ids_up_unless_allowed() {
    let source = standalone();
    let config = Config {
        cors_origins: vec!["https://app.example".into()],
        ..config()
    };
    let router = app(Arc::new(AppState::new(source.clone())), &config);
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

#[tokio::test]
async fn a_loopback_service_answers_only_to_loopback_names() {
    let loopback = Config {
        loopback_hosts_only: true,
        allowed_hosts: vec!["snowflake.internal".into()],
        ..config()
    };
    let router = app(Arc::new(AppState::new(standalone())), &loopback);
    for host in [
        "evil.example",
        "evil.example:8080",
        "127.0.0.1.evil.example:80",
        "10.1.2.3",
    ] {
        let (status, body) = text_of(
            &router,
            with_headers(Method::GET, "/healthz", &[("host", host)]),
        )
        .await;
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
        let (status, body) = text_of(
            &router,
            with_headers(Method::GET, "/healthz", &[("host", host)]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{host}: {body}");
    }
    // Without the check (a service on a public address) any name will do.
    let router = app(Arc::new(AppState::new(standalone())), &config());
    let (status, _) = text_of(
        &router,
        with_headers(Method::GET, "/healthz", &[("host", "evil.example")]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_clock_before_the_epoch_is_503_and_blames_no_parameter() {
    let layout = Layout::twitter().with_epoch_ms(4_102_444_800_000).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let generator = Generator::builder(layout).clock(clock).build().unwrap();
    let router = app(
        Arc::new(AppState::new(Standalone::new(generator))),
        &config(),
    );
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

#[tokio::test]
async fn a_failing_state_file_makes_readiness_fail_too() {
    let dir = std::env::temp_dir().join(format!("snowflake-ready-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let generator = Generator::builder(Layout::twitter())
        .node(&NODE)
        .clock(clock)
        .store(FileMarkStore::new(dir.join("mark")))
        .reserve_ms(2)
        .build()
        .unwrap();
    let router = app(
        Arc::new(AppState::new(Standalone::new(generator))),
        &config(),
    );
    let status = |uri: &'static str| {
        let router = router.clone();
        async move {
            text_of(&router, Request::get(uri).body(Body::empty()).unwrap())
                .await
                .0
        }
    };
    assert_eq!(status("/api/v1/ids").await, StatusCode::OK);
    assert_eq!(status("/readyz").await, StatusCode::OK);
    std::fs::remove_dir_all(&dir).unwrap();
    // The mark is topped up every millisecond here; within 200 ms a write fails.
    let mut refused = false;
    for _ in 0..200 {
        if status("/api/v1/ids").await == StatusCode::SERVICE_UNAVAILABLE {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(refused, "issuing never failed after the directory went");
    assert_eq!(status("/readyz").await, StatusCode::SERVICE_UNAVAILABLE);
    // Once the store works again, so does readiness.
    std::fs::create_dir_all(&dir).unwrap();
    assert_eq!(status("/readyz").await, StatusCode::OK);
    assert_eq!(status("/api/v1/ids").await, StatusCode::OK);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_client_that_leaves_stops_a_large_request() {
    let source = standalone();
    let router = app(Arc::new(AppState::new(source.clone())), &config());
    let before = source.generator().stats().issued;
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

/// A source whose `current` takes a while and notes how many callers are
/// in it at once: a stand-in for a request that holds a turn.
#[derive(Debug)]
struct SlowSource {
    inner: Arc<Standalone>,
    inside: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl IdSource for SlowSource {
    fn layout(&self) -> &Layout {
        self.inner.layout()
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        self.inner.clock()
    }

    fn current(&self) -> Result<Arc<SharedGenerator>, snowflake_server::Unavailable> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.inside.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        self.inside.fetch_sub(1, SeqCst);
        self.inner.current()
    }

    fn shutdown(self: Arc<Self>) -> snowflake_server::Shutdown {
        Box::pin(std::future::ready(Ok(())))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_concurrency_limit_is_one_for_the_whole_server() {
    let source = Arc::new(SlowSource {
        inner: standalone(),
        inside: 0.into(),
        most: 0.into(),
    });
    let config = Config {
        max_concurrency: 1,
        ..config()
    };
    let router = app(Arc::new(AppState::new(source.clone())), &config);
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

/// A server on a loopback port of its own, stopped by sending on the
/// returned channel; the task ends when `serve_until` returns.
async fn on_loopback(
    config: Config,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), snowflake_server::ServeError>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(snowflake_server::serve_until(
        listener,
        standalone(),
        config,
        async move {
            let _ = stopped.await;
        },
    ));
    (addr, stop, server)
}

/// Reads until the server closes the connection (or resets it), at most
/// `limit`; returns what it read and when the connection ended.
async fn read_until_closed(
    stream: &mut tokio::net::TcpStream,
    limit: Duration,
) -> Option<(Vec<u8>, Duration)> {
    use tokio::io::AsyncReadExt;
    let start = std::time::Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit.saturating_sub(start.elapsed()), stream.read(&mut buf))
            .await
        {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some((seen, start.elapsed())),
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// Reads `stream` to its end within 5 s (else fails with `missing`) and
/// checks the answer was a 200.
async fn answered_200(stream: &mut tokio::net::TcpStream, missing: &str) {
    let (answer, _) = read_until_closed(stream, Duration::from_secs(5))
        .await
        .expect(missing);
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test]
async fn a_client_trickling_headers_is_cut_off() {
    use tokio::io::AsyncWriteExt;
    let config = Config {
        header_timeout: Duration::from_secs(1),
        ..config()
    };
    let (addr, stop, server) = on_loopback(config).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n")
        .await
        .unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // One header line every 100 ms, never the blank line that ends them.
    let trickle = tokio::spawn(async move {
        for n in 0.. {
            let line = format!("x-trickle-{n}: {}\r\n", "a".repeat(50));
            if writer.write_all(line.as_bytes()).await.is_err() {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        unreachable!()
    });
    let start = std::time::Instant::now();
    let mut buf = [0u8; 1024];
    let closed = loop {
        use tokio::io::AsyncReadExt;
        match tokio::time::timeout(Duration::from_secs(5), reader.read(&mut buf)).await {
            Err(_) => break None,
            Ok(Ok(0)) | Ok(Err(_)) => break Some(start.elapsed()),
            Ok(Ok(_)) => {}
        }
    };
    let closed = closed.expect("still open 5 s after headers began, with a 1 s timeout");
    assert!(
        closed < Duration::from_millis(2500),
        "cut off only after {closed:?}"
    );
    trickle.abort();
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_kept_alive_connection_waits_for_its_next_request_no_longer_than_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    let config = Config {
        header_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(60),
        ..config()
    };
    let (addr, stop, server) = on_loopback(config).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    // Requests that keep coming, each well within the timeout, keep the
    // connection: the deadline is set for each and lifted when it is in.
    for _ in 0..3 {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        while !answer.ends_with(b"}") {
            use tokio::io::AsyncReadExt;
            let mut buf = [0u8; 1024];
            let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
                .await
                .expect("no answer in 5 s")
                .unwrap();
            assert!(
                n > 0,
                "closed mid-conversation: {}",
                String::from_utf8_lossy(&answer)
            );
            answer.extend_from_slice(&buf[..n]);
        }
        assert!(
            answer.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    // Then silence: closed by the header timeout, long before the idle one.
    let (_, after) = read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .expect("a kept-alive connection stayed open 5 s, with a 1 s header timeout");
    assert!(after < Duration::from_millis(2500), "{after:?}");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_body_sent_slowly_after_its_headers_is_not_cut_off_by_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    let config = Config {
        header_timeout: Duration::from_secs(1),
        ..config()
    };
    let (addr, stop, server) = on_loopback(config).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = b"[\"1\", \"2\", \"3\", \"4\"]";
    let head = format!(
        "POST /api/v1/decode HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The headers are in; the body takes twice the header timeout.
    for part in body.chunks(body.len() / 4 + 1) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stream.write_all(part).await.unwrap();
    }
    answered_200(&mut stream, "no answer 5 s after the body was sent").await;
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    let config = Config {
        idle_timeout: Duration::from_secs(1),
        header_timeout: Duration::from_secs(30),
        ..config()
    };
    let (addr, stop, server) = on_loopback(config).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (_, after) = read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .expect("an idle connection stayed open 5 s, with a 1 s idle timeout");
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_millis(2500),
        "{after:?}"
    );
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_closes_a_half_sent_request_at_the_deadline() {
    use tokio::io::AsyncWriteExt;
    let config = Config {
        header_timeout: Duration::from_secs(60),
        shutdown_timeout: Duration::from_secs(1),
        ..config()
    };
    let (addr, stop, server) = on_loopback(config).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST /api/v1/ids HTTP/1.1\r\nhost: localhost\r\ncontent-length: 10\r\n\r\n12")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let start = std::time::Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("shutdown waited 5 s for a half-sent request, with a 1 s deadline")
        .unwrap()
        .unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_millis(2500), "shutdown took {took:?}");
    assert!(
        read_until_closed(&mut stream, Duration::from_secs(1))
            .await
            .is_some()
    );
}

#[tokio::test]
async fn connections_past_the_cap_wait_for_one_to_close() {
    use tokio::io::AsyncWriteExt;
    let config = Config {
        max_connections: 2,
        ..config()
    };
    let (addr, stop, server) = on_loopback(config).await;
    let first = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _second = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut third = tokio::net::TcpStream::connect(addr).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    // The kernel completed the handshake, but the server does not take the
    // connection while two are open.
    assert!(
        read_until_closed(&mut third, Duration::from_millis(500))
            .await
            .is_none(),
        "a third connection was served past a cap of 2"
    );
    drop(first);
    answered_200(
        &mut third,
        "the third connection was not served after one closed",
    )
    .await;
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn serving_refuses_a_clock_outside_the_layout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let layout = Layout::twitter().with_epoch_ms(4_102_444_800_000).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let generator = Generator::builder(layout).clock(clock).build().unwrap();
    let err =
        snowflake_server::serve_until(listener, Standalone::new(generator), config(), async {})
            .await
            .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("before the layout's epoch 2100-01-01"),
        "{text}"
    );
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

#[tokio::test]
async fn a_stream_not_read_in_time_is_cut_off_and_stops_issuing() {
    let source = standalone();
    let config = Config {
        request_timeout: Duration::from_millis(200),
        ..config()
    };
    let router = app(Arc::new(AppState::new(source.clone())), &config);
    let before = source.generator().stats().issued;
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
    body.frame().await.unwrap().unwrap();
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

//! The first promise on every issuing path: no ID made after the node's
//! right to issue ended reaches a client. Every way the service hands out
//! IDs ([`PATHS`]) is crossed with every way the right can end (before the
//! call, between the generator's answer and the check that follows it,
//! between two chunks of a stream); a route that issues IDs and is missing
//! from [`PATHS`], or was not added to the router as issuing, fails
//! [`every_route_that_issues_is_in_the_matrix`], which walks the router's
//! own list of paths with every method.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake::{Clock, Id, Layout, SharedGenerator, SystemClock, TextForm};
use snowflake_mask::{MaskKey, Masker};
use snowflake_server::{IdSource, Standalone, Unavailable, app};
use tower::ServiceExt;

use crate::support::*;

/// One way the service hands out IDs: a method, a count, whether the
/// client asked for one per line, and whether masked. The text form is
/// crossed with each.
struct IssuingPath {
    method: Method,
    count: u64,
    plain: bool,
    masked: bool,
}

/// One time unit of twitter's layout holds this many IDs: requests up to it
/// are made at once, larger ones are streamed in chunks.
const UNIT: u64 = 4096;
/// The size of a streamed chunk (the server's own constant, not public).
const CHUNK: u64 = 1024;

/// Every issuing path. A new one (another route, another way of writing
/// IDs) joins here.
const PATHS: &[(&str, &str, u64, bool)] = &[
    // (route as OpenAPI names it, method, count, masked)
    ("/api/v1/ids", "GET", 1, false),
    ("/api/v1/ids", "POST", 1, false),
    ("/api/v1/ids", "POST", 3, false),
    ("/api/v1/ids", "GET", UNIT, false),
    ("/api/v1/ids", "POST", UNIT + 1, false),
    ("/api/v1/ids", "GET", UNIT + 2 * CHUNK + 5, false),
    ("/api/v1/ids", "GET", 1, true),
    ("/api/v1/ids", "POST", 3, true),
    ("/api/v1/ids", "POST", UNIT + 1, true),
];

fn paths() -> Vec<IssuingPath> {
    let mut all = Vec::new();
    for &(_, method, count, masked) in PATHS {
        for plain in [false, true] {
            all.push(IssuingPath {
                method: Method::from_bytes(method.as_bytes()).unwrap(),
                count,
                plain,
                masked,
            });
        }
    }
    all
}

/// The key the matrix's service masks with.
fn masker() -> Arc<Masker> {
    let key = MaskKey::from_hex(&"5a".repeat(32)).unwrap();
    Arc::new(Masker::new(&Layout::twitter(), &key).unwrap())
}

/// The chunks a request is made in: one for a request that fits a time
/// unit, else as many as [`CHUNK`] needs.
fn chunks(count: u64) -> u64 {
    if count <= UNIT {
        1
    } else {
        count.div_ceil(CHUNK)
    }
}

/// When the right to issue ends, as seen from the source.
#[derive(Clone, Copy, Debug)]
enum End {
    /// Never: the control, every ID arrives.
    Never,
    /// On the n-th call to `current` (1-based), before it answers: that
    /// call and every later one refuse.
    AtCurrent(u64),
    /// On the n-th call to `still_valid`: the generator already made the
    /// IDs, and the check after them is the first to see the end.
    AtCheck(u64),
    /// When the test says so, between reading two frames of the body.
    ByClient,
}

/// A source whose right to issue ends on cue, keeping account of the IDs
/// the generator had made when the last check before the end passed: no
/// client may see more than that.
#[derive(Debug)]
struct EndingSource {
    generator: Arc<SharedGenerator>,
    layout: Layout,
    end: Mutex<End>,
    ended: AtomicBool,
    currents: AtomicU64,
    checks: AtomicU64,
    /// `issued` of the generator when a check last passed.
    cleared: AtomicU64,
}

impl EndingSource {
    fn new(end: End) -> Arc<Self> {
        let generator = Arc::new(generator_on(Arc::new(SystemClock)));
        Arc::new(EndingSource {
            layout: generator.layout().clone(),
            cleared: generator.stats().issued.into(),
            generator,
            end: Mutex::new(end),
            ended: false.into(),
            currents: 0.into(),
            checks: 0.into(),
        })
    }

    fn issued(&self) -> u64 {
        self.generator.stats().issued
    }

    fn end_now(&self) {
        self.ended.store(true, SeqCst);
    }
}

impl IdSource for EndingSource {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        self.generator.clock()
    }

    fn current(&self) -> Result<Arc<SharedGenerator>, Unavailable> {
        let n = self.currents.fetch_add(1, SeqCst) + 1;
        if matches!(*self.end.lock().unwrap(), End::AtCurrent(at) if at == n) {
            self.end_now();
        }
        if self.ended.load(SeqCst) {
            return Err(Unavailable::new("the lease ended"));
        }
        Ok(Arc::clone(&self.generator))
    }

    fn still_valid(&self, generator: &Arc<SharedGenerator>) -> bool {
        let n = self.checks.fetch_add(1, SeqCst) + 1;
        if matches!(*self.end.lock().unwrap(), End::AtCheck(at) if at == n) {
            self.end_now();
        }
        if self.ended.load(SeqCst) || !Arc::ptr_eq(generator, &self.generator) {
            return false;
        }
        self.cleared.store(self.issued(), SeqCst);
        true
    }

    fn shutdown(self: Arc<Self>) -> snowflake_server::Shutdown {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// What a client received: the status, the body's bytes up to its end or
/// its error, and whether it ended in an error.
struct Received {
    status: StatusCode,
    body: Vec<u8>,
    broken: bool,
}

/// Sends `request` and reads the body frame by frame; with [`End::ByClient`]
/// the right to issue ends after the first frame arrived.
async fn receive(source: &Arc<EndingSource>, request: Request<Body>, end: End) -> Received {
    let router = app(source.clone(), &config().with_masker(masker()));
    let response = router.oneshot(request).await.unwrap();
    let status = response.status();
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    let mut broken = false;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(&data);
                }
                if matches!(end, End::ByClient) {
                    source.end_now();
                }
            }
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    Received {
        status,
        body: bytes,
        broken,
    }
}

/// The IDs in a (possibly cut-off) body of the IDs route, in `form`: one a
/// line, or the strings of `{"layout":…,"ids":[…]}`; a last ID cut off
/// mid-way is not counted.
fn ids_in(body: &[u8], plain: bool, form: TextForm) -> Vec<Id> {
    let text = String::from_utf8_lossy(body);
    let tokens: Vec<&str> = if plain {
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete.lines().collect()
    } else {
        let Some(start) = text.find("\"ids\":[") else {
            return Vec::new();
        };
        let list = &text[start + 7..];
        // Quoted tokens: every second piece between quotes, dropping one
        // left open at a cut.
        let pieces: Vec<&str> = list.split('"').collect();
        let closed = pieces.len() - 1;
        pieces[..closed]
            .iter()
            .skip(1)
            .step_by(2)
            .copied()
            .collect()
    };
    tokens
        .into_iter()
        .map(|t| {
            form.parse(t)
                .unwrap_or_else(|e| panic!("{t:?} is not {form:?}: {e}"))
        })
        .collect()
}

fn request(path: &IssuingPath, form: TextForm) -> Request<Body> {
    let uri = format!(
        "/api/v1/ids?count={}&format={}&masked={}",
        path.count,
        form.name(),
        path.masked
    );
    let mut request = Request::builder().method(path.method.clone()).uri(uri);
    if path.plain {
        request = request.header(header::ACCEPT, "text/plain");
    }
    request.body(Body::empty()).unwrap()
}

/// Every ending that can fall within a request of `count` IDs.
fn endings(count: u64) -> Vec<End> {
    let mut all = vec![End::Never, End::ByClient];
    for n in 1..=chunks(count) {
        all.push(End::AtCurrent(n));
        all.push(End::AtCheck(n));
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_id_made_after_the_right_to_issue_ended_reaches_a_client() {
    let mut cases = 0;
    for path in paths() {
        for form in TextForm::ALL {
            for end in endings(path.count) {
                let what = format!(
                    "{} count={} plain={} masked={} {form:?}, ending {end:?}",
                    path.method, path.count, path.plain, path.masked
                );
                let source = EndingSource::new(end);
                let before = source.issued();
                let got = receive(&source, request(&path, form), end).await;
                let mut ids = ids_in(&got.body, path.plain, form);
                if path.masked {
                    let masker = masker();
                    ids = ids
                        .into_iter()
                        .map(|id| masker.unmask(id).unwrap())
                        .collect();
                }
                let cleared = source.cleared.load(SeqCst) - before;
                assert!(
                    ids.len() as u64 <= cleared,
                    "{what}: {} IDs reached the client, only {cleared} were cleared \
                     before the right to issue ended",
                    ids.len()
                );
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "{what}: not increasing"
                );
                let whole = got.status == StatusCode::OK && !got.broken;
                match end {
                    End::Never => {
                        assert!(whole, "{what}: {}", got.status);
                        assert_eq!(ids.len() as u64, path.count, "{what}");
                    }
                    // Ended before the first check passed: refused before
                    // the answer started.
                    End::AtCurrent(1) | End::AtCheck(1) => {
                        assert_eq!(got.status, StatusCode::SERVICE_UNAVAILABLE, "{what}");
                        assert!(ids.is_empty(), "{what}");
                    }
                    // Ended later: the client cannot take a cut-off stream
                    // for a whole one.
                    End::AtCurrent(_) | End::AtCheck(_) => {
                        assert_eq!(got.status, StatusCode::OK, "{what}");
                        assert!(got.broken, "{what}: a cut-off stream ended cleanly");
                        assert!((ids.len() as u64) < path.count, "{what}");
                    }
                    // The first frame is the whole body of a request that
                    // fits a time unit; a stream is cut off after the
                    // chunks already cleared.
                    End::ByClient => {
                        if chunks(path.count) == 1 {
                            assert!(whole, "{what}");
                        } else if ids.len() as u64 != path.count {
                            assert!(got.broken, "{what}: a cut-off stream ended cleanly");
                        }
                    }
                }
                cases += 1;
            }
        }
    }
    // Every path crossed with every form and ending (a table that shrank by
    // accident would pass the loop above).
    assert!(cases >= PATHS.len() * 2 * 5 * 4, "only {cases} cases ran");
}

/// Each check that ends the right to issue is reached: the endings above
/// are not vacuous because a path never asks the source again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chunk_is_checked_after_it_was_made() {
    for path in paths() {
        let source = EndingSource::new(End::Never);
        let got = receive(&source, request(&path, TextForm::Decimal), End::Never).await;
        assert_eq!(got.status, StatusCode::OK);
        // The stream's producer holds the source until it ends: wait for
        // that, so that a chunk it made after the last counts too.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while Arc::strong_count(&source) > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the stream's producer did not end after its last chunk"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let n = chunks(path.count);
        assert_eq!(
            (source.currents.load(SeqCst), source.checks.load(SeqCst)),
            (n, n),
            "{} count={}: each of {n} chunks asks for the generator and checks after",
            path.method,
            path.count
        );
    }
}

/// The methods the walk below tries on every path: every method a route
/// could answer, not only those the document names.
const METHODS: [Method; 7] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::PATCH,
    Method::OPTIONS,
];

/// The query that makes an operation answer: every required parameter at
/// the document's own example.
fn required_params(doc: &Value, path: &str, method: &Method) -> String {
    let operation = &doc["paths"][path][method.as_str().to_lowercase()];
    let required: Vec<String> = operation["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "query" && p["required"] == true)
        .map(|p| {
            let example = p["example"].as_str().unwrap_or_else(|| {
                panic!("{method} {path}: parameter {} has no example", p["name"])
            });
            format!("{}={example}", p["name"].as_str().unwrap())
        })
        .collect();
    if required.is_empty() {
        String::new()
    } else {
        format!("?{}", required.join("&"))
    }
}

/// Every path the router holds (not the document's list: a route the
/// document missed is still walked), tried with every method: the ones
/// that made the generator issue are exactly the matrix's [`PATHS`], and
/// exactly those paths were added as issuing, which is what the edge
/// guards against foreign pages.
#[tokio::test]
async fn every_route_that_issues_is_in_the_matrix() {
    let doc = get("/api/v1/openapi.json").await.json();
    let routes = snowflake_server::api_routes();
    let mut issued = BTreeSet::new();
    for route in &routes {
        for method in METHODS {
            // Every route answering: with a key, and unmasking allowed.
            let source = Standalone::new(generator_on(Arc::new(SystemClock)));
            let everything = config().with_masker(masker()).with_allow_unmask(true);
            let router = app(source.clone(), &everything);
            let before = source.generator().stats().issued;
            let path = route.path.replace("{id}", "4194439168");
            let uri = format!("{path}{}", required_params(&doc, &route.path, &method));
            let request = Request::builder()
                .method(method.clone())
                .uri(&uri)
                .header(header::CONTENT_TYPE, "text/plain")
                .body(Body::from("4194439168"))
                .unwrap();
            let response = router.oneshot(request).await.unwrap();
            let status = response.status();
            response.into_body().collect().await.unwrap();
            let documented = doc["paths"][&route.path]
                .get(method.as_str().to_lowercase())
                .is_some();
            assert!(
                !documented || status.is_success(),
                "{method} {uri}: {status}"
            );
            if source.generator().stats().issued != before {
                issued.insert((route.path.clone(), method.to_string()));
            }
        }
    }
    let listed: BTreeSet<(String, String)> = PATHS
        .iter()
        .map(|(route, method, _, _)| (route.to_string(), method.to_string()))
        .collect();
    assert_eq!(
        issued, listed,
        "the routes that issue IDs and the matrix's paths differ"
    );
    let declared: BTreeSet<String> = routes
        .iter()
        .filter(|r| r.issuing)
        .map(|r| r.path.clone())
        .collect();
    let issuing: BTreeSet<String> = issued.into_iter().map(|(path, _)| path).collect();
    assert_eq!(
        declared, issuing,
        "the paths added as issuing (those the edge guards) and the paths that issue differ"
    );
    // The document describes the router's paths, and says which issue.
    let documented: BTreeSet<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let held: BTreeSet<&str> = routes.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        documented, held,
        "the document and the router hold other paths"
    );
    let answering_503: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .iter()
                .filter(|(_, op)| {
                    op["tags"]
                        .as_array()
                        .is_some_and(|t| t.contains(&Value::from("ids")))
                })
                .filter(|(_, op)| op["responses"].get("503").is_some())
                .map(|(m, _)| (path.clone(), m.to_uppercase()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        answering_503, listed,
        "OpenAPI: routes answering 503 for want of a generator"
    );
}

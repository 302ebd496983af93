//! What the API tests share: requests through the router in process,
//! sources that refuse or revoke on cue, captured logs, and servers on
//! loopback sockets for the tests that need a real connection.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake::{Clock, Generator, Layout, SharedGenerator, SystemClock};
use snowflake_server::{Config, IdSource, Standalone, app};
use tower::ServiceExt;

pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    /// The whole answer, its body read to the end.
    pub async fn of(response: axum::response::Response) -> Reply {
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

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

/// The settings every test starts from; a test changes what it tests
/// with `Config`'s setters.
pub fn config() -> Config {
    Config::new()
}

/// The node every test issues as: datacenter 2, machine 5.
pub const NODE: [(&str, u64); 2] = [("datacenter", 2), ("machine", 5)];

pub fn generator_on(clock: Arc<dyn Clock>) -> SharedGenerator {
    Generator::builder(Layout::twitter())
        .node(&NODE)
        .clock(clock)
        .build()
        .unwrap()
}

pub fn standalone() -> Arc<Standalone> {
    Standalone::new(generator_on(Arc::new(SystemClock)))
}

pub async fn send_with(config: &Config, request: Request<Body>) -> Reply {
    let router = app(standalone(), config);
    Reply::of(router.oneshot(request).await.unwrap()).await
}

pub async fn get(uri: &str) -> Reply {
    send_with(&config(), Request::get(uri).body(Body::empty()).unwrap()).await
}

pub fn assert_problem(reply: &Reply, status: StatusCode, field: Option<&str>, detail: &str) {
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

/// Each `(uri, field, detail)` refused with a 400 that names the field
/// and says the detail.
pub async fn assert_all_refused(cases: &[(&str, &str, &str)]) {
    for (uri, field, detail) in cases {
        assert_problem(
            &get(uri).await,
            StatusCode::BAD_REQUEST,
            Some(field),
            detail,
        );
    }
}

/// A source that holds a generator but may be told to refuse, or to revoke
/// its permission after IDs were made: what a leased slot does, without
/// etcd.
#[derive(Debug)]
pub struct FakeSource {
    pub generator: Arc<SharedGenerator>,
    pub layout: Layout,
    pub refuse: std::sync::atomic::AtomicBool,
    pub revoke_after_issue: std::sync::atomic::AtomicBool,
    /// `current` panics, as a bug in a source would.
    pub panic: std::sync::atomic::AtomicBool,
}

impl FakeSource {
    pub fn new() -> Arc<Self> {
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
pub struct Captured(pub Arc<std::sync::Mutex<Vec<u8>>>);

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
    pub fn at_info() -> (Captured, tracing::subscriber::DefaultGuard) {
        let logs = Captured::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

pub async fn post(uri: &str, content_type: &str, accept: &str, body: impl Into<Body>) -> Reply {
    let request = Request::post(uri)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::ACCEPT, accept)
        .body(body.into())
        .unwrap();
    send_with(&config(), request).await
}

/// A small xorshift, so the random requests below need no dependency and a
/// failure repeats.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn token(&mut self) -> String {
        let len = 1 + self.next() % 12;
        (0..len)
            .map(|_| (b'A' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

pub async fn text_of(router: &axum::Router, request: Request<Body>) -> (StatusCode, String) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// GET `uri` from `router`: the status, and the body as text.
pub async fn get_from(router: &axum::Router, uri: &str) -> (StatusCode, String) {
    text_of(router, Request::get(uri).body(Body::empty()).unwrap()).await
}

pub fn with_headers(method: Method, uri: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut request = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(Body::empty()).unwrap()
}

/// A source whose `current` takes a while and notes how many callers are
/// in it at once: a stand-in for a request that holds a turn.
#[derive(Debug)]
pub struct SlowSource {
    pub inner: Arc<Standalone>,
    pub inside: std::sync::atomic::AtomicUsize,
    pub most: std::sync::atomic::AtomicUsize,
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

/// A server of its own on a loopback port, serving [`standalone`].
pub struct Served {
    pub addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), snowflake_server::ServeError>>,
}

impl Served {
    /// Binds port 0 and serves with `config` until [`Served::stop`].
    pub async fn start(config: Config) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(snowflake_server::serve_until(
            listener,
            standalone(),
            config,
            async move {
                let _ = stopped.await;
            },
        ));
        Served { addr, stop, task }
    }

    /// A new connection to the server.
    pub async fn connect(&self) -> tokio::net::TcpStream {
        tokio::net::TcpStream::connect(self.addr).await.unwrap()
    }

    /// Asks the server to stop and waits, at most `limit`, for it to finish
    /// cleanly.
    pub async fn stop_within(self, limit: Duration) {
        let _ = self.stop.send(());
        tokio::time::timeout(limit, self.task)
            .await
            .unwrap_or_else(|_| panic!("the server took over {limit:?} to stop"))
            .unwrap()
            .unwrap();
    }

    /// Stops the server and waits for it to finish cleanly.
    pub async fn stop(self) {
        self.stop_within(Duration::from_secs(30)).await;
    }
}

/// Reads until the server closes the connection (or resets it), at most
/// `limit`; returns what it read and when the connection ended.
pub async fn read_until_closed(
    stream: &mut (impl tokio::io::AsyncRead + Unpin),
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

/// Reads `stream` until what it read ends with `end` (the end of an
/// answer, while the connection stays open), failing if the server closes
/// it first or sends nothing for 5 s.
pub async fn read_until_it_ends_with(stream: &mut tokio::net::TcpStream, end: &[u8]) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    let mut buf = [0u8; 65536];
    while !seen.ends_with(end) {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("nothing more of the answer in 5 s")
            .unwrap();
        assert!(
            n > 0,
            "closed before the answer ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    seen
}

/// Reads `stream` to its end within 5 s (else fails with `missing`) and
/// checks the answer was a 200.
pub async fn answered_200(stream: &mut tokio::net::TcpStream, missing: &str) {
    let (answer, _) = read_until_closed(stream, Duration::from_secs(5))
        .await
        .expect(missing);
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

/// How late the watchdog may close a connection beyond the time the code
/// states (a quarter of the timeout): scheduling on a busy machine.
pub const SLACK: Duration = Duration::from_millis(500);

/// Asserts that a connection closed `after` a timeout of `timeout` ran
/// out as the code promises: not before it, and within a quarter of it
/// after (plus [`SLACK`]).
pub fn assert_closed_on_time(after: Duration, timeout: Duration, what: &str) {
    // The watchdog's steps start at the connection's first instant, a
    // little before the test's clock does.
    let early = Duration::from_millis(50);
    assert!(
        after + early >= timeout && after <= timeout + timeout / 4 + SLACK,
        "{what}: closed after {after:?}, with a timeout of {timeout:?}"
    );
}

/// HTTP/2 by hand, for the tests of what a server must not let HTTP/2
/// clients do: frames as RFC 9113 lays them out.
pub mod h2 {
    /// What a client sends first.
    pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    /// A frame of `kind` with `flags` on `stream`.
    pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut out = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// An empty SETTINGS frame.
    pub fn settings() -> Vec<u8> {
        frame(0x4, 0, 0, &[])
    }

    /// A PING.
    pub fn ping() -> Vec<u8> {
        frame(0x6, 0, 0, &[0; 8])
    }

    /// `GET path` on `stream`, headers and end of stream in one frame
    /// (HPACK: the static table's `:method GET` and `:scheme http`, the
    /// path and authority as literals).
    pub fn get(stream: u32, path: &str) -> Vec<u8> {
        let mut block = vec![0x82, 0x86, 0x44, path.len() as u8];
        block.extend_from_slice(path.as_bytes());
        block.extend_from_slice(&[0x41, 9]);
        block.extend_from_slice(b"localhost");
        frame(0x1, 0x4 | 0x1, stream, &block)
    }
}

/// The shared test vectors (`testdata/vectors.json`).
pub fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/vectors.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

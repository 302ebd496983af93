//! The service's HTTP settings; the CLI fills them from flags and environment.

use std::sync::Arc;
use std::time::Duration;

use snowflake_mask::Masker;

/// How the service behaves on the wire. Where IDs come from is not here:
/// that is the [`IdSource`](crate::IdSource) the caller hands over.
#[derive(Debug, Clone)]
pub struct Config {
    /// How long one request may take, a streamed body's reading included.
    pub request_timeout: Duration,
    /// How many requests the whole server serves at once; more wait.
    pub max_concurrency: usize,
    /// How many chunks of large requests (more IDs than one time unit
    /// holds) are made at once, so they cannot crowd out small ones.
    pub max_large_batches: usize,
    /// How long a client may take to send a request's headers. An HTTP/1
    /// connection waiting for its next request is bound by it too. The
    /// connection is closed within a quarter of this (or of the idle
    /// timeout, if shorter) after the deadline.
    pub header_timeout: Duration,
    /// How long a connection may go without a byte moving either way before
    /// it is closed, whether it waits for a request or stalls a response;
    /// closed within a quarter of the shorter timeout after that.
    pub idle_timeout: Duration,
    /// How many connections may be open at once; further ones wait in the
    /// listener's backlog until one closes.
    pub max_connections: usize,
    /// After a shutdown signal, how long requests in flight may take before
    /// their connections are closed.
    pub shutdown_timeout: Duration,
    /// Origins, besides the service's own, whose pages may ask for IDs
    /// (`https://app.example.com`); they get CORS headers.
    pub cors_origins: Vec<String>,
    /// Whether requests must name a loopback host (`localhost`, `127.x.y.z`,
    /// `[::1]`) or one of [`allowed_hosts`](Config::allowed_hosts): on for a
    /// service listening on loopback, against DNS rebinding.
    pub loopback_hosts_only: bool,
    /// Host names accepted besides loopback ones, when
    /// [`loopback_hosts_only`](Config::loopback_hosts_only) is on.
    pub allowed_hosts: Vec<String>,
    /// Whether to speak HTTP/2 (cleartext, with prior knowledge) beside
    /// HTTP/1.1. Off by default: no browser speaks HTTP/2 without TLS, and
    /// each HTTP/2 connection can hold [`Config::HTTP2_MAX_STREAMS`]
    /// requests' worth of memory where an HTTP/1 one holds one. On, each
    /// connection has at most that many streams, each at most
    /// [`Config::MAX_BUFFER`] bytes queued, and a connection with no stream
    /// open is closed at the header timeout whatever control frames
    /// (PING, SETTINGS) it sends.
    pub http2: bool,
    /// Whether `/api/v1/unmask/{id}` answers (with a masking key given to
    /// the state): off by default, since it gives anyone who can reach the
    /// service back what masking hides.
    pub allow_unmask: bool,
    /// The keyed permutation for IDs asked for masked, built from the
    /// operator's key for the source's layout; `None`: no key, and
    /// `masked=true` is refused.
    pub masker: Option<Arc<Masker>>,
    /// Readiness fails while the kernel says the clock is not synchronised
    /// or puts its maximum error above this many milliseconds; `None`
    /// (the default): the clock is only reported.
    pub require_clock_sync: Option<u64>,
}

impl Config {
    /// The longest a request may take by default.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
    /// Requests served at once by default.
    pub const DEFAULT_MAX_CONCURRENCY: usize = 1024;
    /// Chunks of large requests made at once by default.
    pub const DEFAULT_MAX_LARGE_BATCHES: usize = 2;
    /// The default time to send a request's headers.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default time a connection may sit without traffic.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// Connections open at once by default.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
    /// The default time requests in flight get after a shutdown signal.
    pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
    /// The most a connection buffers each way (an HTTP/2 stream: each of
    /// its streams): request headers beyond it are refused, and a response
    /// waits for the client once this much of it is queued.
    pub const MAX_BUFFER: usize = 64 * 1024;
    /// Streams an HTTP/2 connection may have open at once; more are refused
    /// until one ends.
    pub const HTTP2_MAX_STREAMS: u32 = 8;
    /// The send buffer asked of the kernel for each connection (Linux
    /// keeps twice this): what the kernel may queue for a client that does
    /// not read, beside what the service holds. Its own tuning would let
    /// each such client pin megabytes of kernel memory, and have that many
    /// IDs issued, that nobody receives.
    pub const SEND_BUFFER: usize = 128 * 1024;
}

impl Default for Config {
    fn default() -> Self {
        Config {
            request_timeout: Config::DEFAULT_REQUEST_TIMEOUT,
            max_concurrency: Config::DEFAULT_MAX_CONCURRENCY,
            max_large_batches: Config::DEFAULT_MAX_LARGE_BATCHES,
            header_timeout: Config::DEFAULT_HEADER_TIMEOUT,
            idle_timeout: Config::DEFAULT_IDLE_TIMEOUT,
            max_connections: Config::DEFAULT_MAX_CONNECTIONS,
            shutdown_timeout: Config::DEFAULT_SHUTDOWN_TIMEOUT,
            cors_origins: Vec::new(),
            loopback_hosts_only: false,
            allowed_hosts: Vec::new(),
            http2: false,
            allow_unmask: false,
            masker: None,
            require_clock_sync: None,
        }
    }
}

//! The service's settings, in one place: [`Config::new`] holds every
//! default, and each `with_*` setter changes one. The CLI builds it once
//! from its flags (whose defaults are these constants), the tests from one
//! helper; nothing else sets a limit.

use std::sync::Arc;
use std::time::Duration;

use snowflake_mask::Masker;

use crate::clock_health::{KernelClock, KernelClockReader};

/// How the service behaves: its limits, who may ask, and what it offers
/// beyond plain IDs. Where IDs come from is not here: that is the
/// [`IdSource`](crate::IdSource) the caller hands over.
///
/// ```
/// use std::time::Duration;
/// use snowflake_server::Config;
///
/// let config = Config::new()
///     .with_request_timeout(Duration::from_secs(5))
///     .with_cors_origins(vec!["https://app.example.com".into()]);
/// assert_eq!(config.request_timeout(), Duration::from_secs(5));
/// assert_eq!(Config::new().max_concurrency(), Config::DEFAULT_MAX_CONCURRENCY);
/// ```
#[derive(Clone)]
pub struct Config {
    pub(crate) request_timeout: Duration,
    pub(crate) max_concurrency: usize,
    pub(crate) max_large_batches: usize,
    pub(crate) header_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) cors_origins: Vec<String>,
    pub(crate) loopback_hosts_only: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) http2: bool,
    pub(crate) allow_unmask: bool,
    pub(crate) masker: Option<Arc<Masker>>,
    pub(crate) require_clock_sync: Option<u64>,
    pub(crate) kernel_clock: KernelClockReader,
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
    /// The clock error readiness accepts when the operator requires a
    /// synchronised clock without naming a bound, in milliseconds.
    pub const DEFAULT_MAX_CLOCK_ERROR_MS: u64 = 100;
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

    /// Every setting at its default: the limits above, no other origin or
    /// host, HTTP/1.1 only, no masking key, unmasking off, the clock only
    /// reported.
    pub fn new() -> Self {
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
            kernel_clock: KernelClock::reader(),
        }
    }

    /// How long one request may take, a streamed body's reading included.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How many requests the whole server serves at once; more wait.
    pub fn with_max_concurrency(mut self, requests: usize) -> Self {
        self.max_concurrency = requests;
        self
    }

    /// How many chunks of large requests (more IDs than one time unit
    /// holds) are made at once, so they cannot crowd out small ones.
    pub fn with_max_large_batches(mut self, chunks: usize) -> Self {
        self.max_large_batches = chunks;
        self
    }

    /// How long a client may take to send a request's headers. An HTTP/1
    /// connection waiting for its next request is bound by it too. The
    /// connection is closed within a quarter of this (or of the idle
    /// timeout, if shorter) after the deadline.
    pub fn with_header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// How long a connection may go without a byte moving either way before
    /// it is closed, whether it waits for a request or stalls a response;
    /// closed within a quarter of the shorter timeout after that.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// How many connections may be open at once; further ones wait in the
    /// listener's backlog until one closes.
    pub fn with_max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// After a shutdown signal, how long requests in flight may take before
    /// their connections are closed.
    pub fn with_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Origins, besides the service's own, whose pages may ask for IDs
    /// (`https://app.example.com`); they get CORS headers.
    pub fn with_cors_origins(mut self, origins: Vec<String>) -> Self {
        self.cors_origins = origins;
        self
    }

    /// Whether requests must name a loopback host (`localhost`, `127.x.y.z`,
    /// `[::1]`) or one of the [allowed hosts](Config::with_allowed_hosts),
    /// against DNS rebinding. [`serve`](crate::serve) turns it on for a
    /// listener on loopback.
    pub fn with_loopback_hosts_only(mut self, on: bool) -> Self {
        self.loopback_hosts_only = on;
        self
    }

    /// Host names accepted besides loopback ones, where only loopback hosts
    /// are answered.
    pub fn with_allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Whether to speak HTTP/2 (cleartext, with prior knowledge) beside
    /// HTTP/1.1. Off by default: no browser speaks HTTP/2 without TLS, and
    /// each HTTP/2 connection can hold [`Config::HTTP2_MAX_STREAMS`]
    /// requests' worth of memory where an HTTP/1 one holds one. On, each
    /// connection has at most that many streams, each at most
    /// [`Config::MAX_BUFFER`] bytes queued, and a connection with no stream
    /// open is closed at the header timeout whatever control frames
    /// (PING, SETTINGS) it sends.
    pub fn with_http2(mut self, on: bool) -> Self {
        self.http2 = on;
        self
    }

    /// Whether `/api/v1/unmask/{id}` answers (with a masking key): off by
    /// default, since it gives anyone who can reach the service back what
    /// masking hides.
    pub fn with_allow_unmask(mut self, on: bool) -> Self {
        self.allow_unmask = on;
        self
    }

    /// The keyed permutation for IDs asked for masked
    /// (`/api/v1/ids?masked=true`) and, where allowed, unmasked; it must be
    /// for the source's layout. Without one, `masked=true` is refused.
    pub fn with_masker(mut self, masker: Arc<Masker>) -> Self {
        self.masker = Some(masker);
        self
    }

    /// Readiness fails while the kernel says the clock is not synchronised
    /// or puts its maximum error above this many milliseconds; `None` (the
    /// default): the clock is only reported.
    pub fn with_require_clock_sync(mut self, max_error_ms: Option<u64>) -> Self {
        self.require_clock_sync = max_error_ms;
        self
    }

    /// Reads the kernel's view of the clock from `reader` instead of the
    /// kernel (a test's fake clock).
    pub fn with_kernel_clock(mut self, reader: KernelClockReader) -> Self {
        self.kernel_clock = reader;
        self
    }

    /// How long one request may take.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// How many requests the whole server serves at once.
    pub fn max_concurrency(&self) -> usize {
        self.max_concurrency
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("request_timeout", &self.request_timeout)
            .field("max_concurrency", &self.max_concurrency)
            .field("max_large_batches", &self.max_large_batches)
            .field("header_timeout", &self.header_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("cors_origins", &self.cors_origins)
            .field("loopback_hosts_only", &self.loopback_hosts_only)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("http2", &self.http2)
            .field("allow_unmask", &self.allow_unmask)
            .field("masker", &self.masker)
            .field("require_clock_sync", &self.require_clock_sync)
            .finish_non_exhaustive()
    }
}

//! The service's settings, in one place: [`Config::new`] holds every
//! default, and each `with_*` setter changes one. The CLI builds it once
//! from its flags (whose defaults are these constants), the tests from one
//! helper; nothing else sets a limit.

use std::sync::Arc;
use std::time::Duration;

use snowflake_mask::Masker;

use crate::clock_health::{KernelClock, KernelClockReader};

/// Writes the setters that change one setting and hand the config back:
/// `with_x(value: T) => field;` sets `field` to `value`, under the doc
/// comments above it.
macro_rules! setters {
    ($($(#[$doc:meta])* $setter:ident($value:ident: $ty:ty) => $field:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $setter(mut self, $value: $ty) -> Self {
                self.$field = $value;
                self
            }
        )*
    };
}

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

    setters! {
        /// How long one request may take, a streamed body's reading included.
        with_request_timeout(timeout: Duration) => request_timeout;

        /// How many requests the whole server serves at once; more wait.
        with_max_concurrency(requests: usize) => max_concurrency;

        /// How many chunks of large requests (more IDs than one time unit
        /// holds) are made at once, so they cannot crowd out small ones.
        with_max_large_batches(chunks: usize) => max_large_batches;

        /// How long a client may take to send a request's headers. An HTTP/1
        /// connection waiting for its next request is bound by it too. The
        /// connection is closed within a quarter of this (or of the idle
        /// timeout, if shorter) after the deadline.
        with_header_timeout(timeout: Duration) => header_timeout;

        /// How long a connection may go without a byte moving either way before
        /// it is closed, whether it waits for a request or stalls a response;
        /// closed within a quarter of the shorter timeout after that.
        with_idle_timeout(timeout: Duration) => idle_timeout;

        /// How many connections may be open at once; further ones wait in the
        /// listener's backlog until one closes.
        with_max_connections(connections: usize) => max_connections;

        /// After a shutdown signal, how long requests in flight may take before
        /// their connections are closed.
        with_shutdown_timeout(timeout: Duration) => shutdown_timeout;

        /// Origins, besides the service's own, whose pages may ask for IDs
        /// (`https://app.example.com`); they get CORS headers.
        with_cors_origins(origins: Vec<String>) => cors_origins;

        /// Whether requests must name a loopback host (`localhost`,
        /// `127.x.y.z`, `[::1]`) or one of the [allowed
        /// hosts](Config::with_allowed_hosts), against DNS rebinding.
        /// [`serve`](crate::serve) turns it on for a listener on loopback.
        with_loopback_hosts_only(on: bool) => loopback_hosts_only;

        /// Host names accepted besides loopback ones, where only loopback hosts
        /// are answered.
        with_allowed_hosts(hosts: Vec<String>) => allowed_hosts;

        /// Whether to speak HTTP/2 (cleartext, with prior knowledge) beside
        /// HTTP/1.1. Off by default: no browser speaks HTTP/2 without TLS, and
        /// each HTTP/2 connection can hold [`Config::HTTP2_MAX_STREAMS`]
        /// requests' worth of memory where an HTTP/1 one holds one. On, each
        /// connection has at most that many streams, each at most
        /// [`Config::MAX_BUFFER`] bytes queued, and a connection with no stream
        /// open is closed at the header timeout whatever control frames (PING,
        /// SETTINGS) it sends.
        with_http2(on: bool) => http2;

        /// Whether `/api/v1/unmask/{id}` answers (with a masking key): off by
        /// default, since it gives anyone who can reach the service back what
        /// masking hides.
        with_allow_unmask(on: bool) => allow_unmask;

        /// Readiness fails while the kernel says the clock is not synchronised
        /// or puts its maximum error above this many milliseconds; `None` (the
        /// default): the clock is only reported.
        with_require_clock_sync(max_error_ms: Option<u64>) => require_clock_sync;

        /// Reads the kernel's view of the clock from `reader` instead of the
        /// kernel (a test's fake clock).
        with_kernel_clock(reader: KernelClockReader) => kernel_clock;
    }

    /// The keyed permutation for IDs asked for masked
    /// (`/api/v1/ids?masked=true`) and, where allowed, unmasked; it must be
    /// for the source's layout. Without one, `masked=true` is refused.
    pub fn with_masker(mut self, masker: Arc<Masker>) -> Self {
        self.masker = Some(masker);
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

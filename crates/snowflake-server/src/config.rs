//! The service's HTTP settings; the CLI fills them from flags and environment.

use std::time::Duration;

/// How the service behaves on the wire. Where IDs come from is not here:
/// that is the [`IdSource`](crate::IdSource) the caller hands over.
#[derive(Debug, Clone)]
pub struct Config {
    /// How long one request may take.
    pub request_timeout: Duration,
    /// How many requests are served at once; more wait.
    pub max_concurrency: usize,
}

impl Config {
    /// The longest a request may take by default.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
    /// Requests served at once by default.
    pub const DEFAULT_MAX_CONCURRENCY: usize = 1024;
}

impl Default for Config {
    fn default() -> Self {
        Config {
            request_timeout: Config::DEFAULT_REQUEST_TIMEOUT,
            max_concurrency: Config::DEFAULT_MAX_CONCURRENCY,
        }
    }
}

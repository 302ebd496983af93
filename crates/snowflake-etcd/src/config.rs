//! How a node joins a cluster, and how it connects to etcd.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};
use serde::{Deserialize, Serialize};
use snowflake::{Clock, Generator, Layout, SystemClock};

use crate::error::Error;
use crate::members::{InTurn, past_refusals};

/// How a node joins a cluster: [`ClusterConfig::new`] with the etcd
/// endpoints and the layout, every other setting at the default that
/// `snowflake serve --etcd` uses, and the `with_` setters for the rest.
///
/// ```
/// use std::time::Duration;
/// use snowflake::Layout;
/// use snowflake_etcd::ClusterConfig;
///
/// let config = ClusterConfig::new(vec!["http://10.0.0.1:2379".into()], Layout::twitter())
///     .with_name("ids")
///     .with_fixed(vec![("datacenter".into(), 3)])
///     .with_lease_ttl(Duration::from_secs(6));
/// assert_eq!(config.name(), "ids");
/// // The margin follows the TTL unless it is set: a quarter of it, here.
/// assert_eq!(config.margin(), Duration::from_millis(1500));
/// assert_eq!(config.max_clock_skew_ms(), ClusterConfig::DEFAULT_MAX_CLOCK_SKEW_MS);
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone)]
pub struct ClusterConfig {
    /// etcd endpoints, e.g. `http://127.0.0.1:2379`.
    pub(crate) endpoints: Vec<String>,
    /// The cluster's name: the key prefix that separates clusters.
    pub(crate) name: String,
    /// The layout whose node fields are the slots.
    pub(crate) layout: Layout,
    /// Node fields the user fixed (e.g. `datacenter=3`): only slots with
    /// these values are claimed.
    pub(crate) fixed: Vec<(String, u64)>,
    /// The lease's time to live.
    pub(crate) lease_ttl: Duration,
    /// How long before the lease could expire the node stops issuing;
    /// `None`: [`ClusterConfig::default_margin`] of the TTL.
    margin: Option<Duration>,
    /// Clock step back the generator waits out.
    pub(crate) tolerance_ms: u64,
    /// How far ahead the mark is reserved.
    pub(crate) reserve_ms: u64,
    /// The clock the generator reads.
    pub(crate) clock: Arc<dyn Clock>,
    /// What the slot key says about this node.
    pub(crate) info: NodeInfo,
    /// The clock skew between nodes beyond which the node logs a warning
    /// (see `skew`).
    pub(crate) max_clock_skew_ms: u64,
    /// User name and password for etcd, if it requires them.
    pub(crate) auth: Option<(String, String)>,
    /// TLS settings, used when the endpoints are `https://`.
    pub(crate) tls: TlsConfig,
}

impl ClusterConfig {
    /// The cluster's name unless told otherwise.
    pub const DEFAULT_NAME: &'static str = "default";
    /// The lease's time to live unless told otherwise: 10 s.
    pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);
    /// The clock skew between nodes beyond which a node warns, unless told
    /// otherwise: 100 ms.
    pub const DEFAULT_MAX_CLOCK_SKEW_MS: u64 = 100;

    /// A node of cluster [`DEFAULT_NAME`](Self::DEFAULT_NAME) on the etcd
    /// at `endpoints`, whose slots are the node fields of `layout`; its
    /// lease lives [`DEFAULT_LEASE_TTL`](Self::DEFAULT_LEASE_TTL) with the
    /// [default margin](Self::default_margin), its generator has the core's
    /// default tolerance and reserve on the system clock, it warns of clock
    /// skew beyond [`DEFAULT_MAX_CLOCK_SKEW_MS`](Self::DEFAULT_MAX_CLOCK_SKEW_MS),
    /// and its slot key names this host and process. No credentials, and
    /// the system's roots for `https://` endpoints.
    pub fn new(endpoints: Vec<String>, layout: Layout) -> ClusterConfig {
        ClusterConfig {
            endpoints,
            name: Self::DEFAULT_NAME.into(),
            layout,
            fixed: Vec::new(),
            lease_ttl: Self::DEFAULT_LEASE_TTL,
            margin: None,
            tolerance_ms: Generator::DEFAULT_TOLERANCE_MS,
            reserve_ms: Generator::DEFAULT_RESERVE_MS,
            clock: Arc::new(SystemClock),
            info: NodeInfo::of_this_process(),
            max_clock_skew_ms: Self::DEFAULT_MAX_CLOCK_SKEW_MS,
            auth: None,
            tls: TlsConfig::default(),
        }
    }

    /// The cluster's name: the key prefix that separates clusters.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Node fields fixed by the user (e.g. `datacenter=3`): only slots with
    /// these values are claimed.
    pub fn with_fixed(mut self, fixed: Vec<(String, u64)>) -> Self {
        self.fixed = fixed;
        self
    }

    /// The lease's time to live. The margin follows it unless set.
    pub fn with_lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl;
        self
    }

    /// How long before the lease could expire the node stops issuing,
    /// instead of the [default](Self::default_margin).
    pub fn with_margin(mut self, margin: Duration) -> Self {
        self.margin = Some(margin);
        self
    }

    /// How far the generator waits out a clock step back (see
    /// `GeneratorBuilder::tolerance_ms`).
    pub fn with_tolerance_ms(mut self, ms: u64) -> Self {
        self.tolerance_ms = ms;
        self
    }

    /// How far ahead of use the generator reserves the mark (see
    /// `GeneratorBuilder::reserve_ms`); the session keeps the mark this
    /// plus the TTL ahead of the clock.
    pub fn with_reserve_ms(mut self, ms: u64) -> Self {
        self.reserve_ms = ms;
        self
    }

    /// The clock the generator reads and the node publishes.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Where the node's API listens, for its slot key.
    pub fn with_address(mut self, address: impl Into<String>) -> Self {
        self.info.address = address.into();
        self
    }

    /// The host name its slot key and clock give, instead of this host's.
    pub fn with_hostname(mut self, hostname: impl Into<String>) -> Self {
        self.info.hostname = hostname.into();
        self
    }

    /// The clock skew between nodes beyond which the node warns.
    pub fn with_max_clock_skew_ms(mut self, ms: u64) -> Self {
        self.max_clock_skew_ms = ms;
        self
    }

    /// The user name and password etcd requires.
    pub fn with_auth(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.auth = Some((user.into(), password.into()));
        self
    }

    /// TLS to `https://` endpoints.
    pub fn with_tls(mut self, tls: TlsConfig) -> Self {
        self.tls = tls;
        self
    }

    /// The etcd endpoints.
    pub fn endpoints(&self) -> &[String] {
        &self.endpoints
    }

    /// The cluster's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The layout whose node fields are the slots.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The lease's time to live.
    pub fn lease_ttl(&self) -> Duration {
        self.lease_ttl
    }

    /// How long before the lease could expire the node stops issuing.
    pub fn margin(&self) -> Duration {
        self.margin
            .unwrap_or_else(|| Self::default_margin(self.lease_ttl))
    }

    /// How far the generator waits out a clock step back.
    pub fn tolerance_ms(&self) -> u64 {
        self.tolerance_ms
    }

    /// How far ahead of use the generator reserves the mark.
    pub fn reserve_ms(&self) -> u64 {
        self.reserve_ms
    }

    /// The clock the generator reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The clock skew between nodes beyond which the node warns.
    pub fn max_clock_skew_ms(&self) -> u64 {
        self.max_clock_skew_ms
    }
}

/// TLS to etcd, for `https://` endpoints.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// PEM CA certificates to trust; without them, the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// A PEM client certificate and its private key, for etcd's
    /// `--client-cert-auth` (mutual TLS).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("ca", &self.ca_pem.is_some())
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

impl TlsConfig {
    /// etcd-client's options: the given CA or else the system's roots, and
    /// the client certificate if there is one.
    fn options(&self) -> TlsOptions {
        let options = match &self.ca_pem {
            Some(pem) => TlsOptions::new().ca_certificate(Certificate::from_pem(pem)),
            // Without this, rustls trusts nothing and every https://
            // endpoint fails its handshake.
            None => TlsOptions::new().with_native_roots(),
        };
        match &self.identity {
            Some((cert, key)) => options.identity(Identity::from_pem(cert, key)),
            None => options,
        }
    }
}

impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("endpoints", &self.endpoints)
            .field("name", &self.name)
            .field("layout", &self.layout.name())
            .field("fixed", &self.fixed)
            .field("lease_ttl", &self.lease_ttl)
            .field("margin", &self.margin())
            .field("max_clock_skew_ms", &self.max_clock_skew_ms)
            .field("tls", &self.tls)
            .field("auth", &self.auth.as_ref().map(|(user, _)| user))
            .finish_non_exhaustive()
    }
}

impl ClusterConfig {
    /// The margin for a TTL when none is given: a quarter of the TTL, at
    /// least 500 ms, leaving time for renewals to fail over.
    pub fn default_margin(ttl: Duration) -> Duration {
        (ttl / 4).max(Duration::from_millis(500)).min(ttl / 2)
    }

    /// The key prefix of this cluster: `/snowflake/{name}/`.
    pub(crate) fn prefix(&self) -> String {
        format!("/snowflake/{}/", self.name)
    }

    /// The key that says who holds `slot`.
    pub(crate) fn slot_key(&self, slot: &impl std::fmt::Display) -> String {
        format!("{}slots/{slot}", self.prefix())
    }

    /// The key of `slot`'s high-water mark.
    pub(crate) fn mark_key(&self, slot: &impl std::fmt::Display) -> String {
        format!("{}marks/{slot}", self.prefix())
    }

    /// Where the nodes publish their clocks, one key a lease.
    pub(crate) fn clocks_prefix(&self) -> String {
        format!("{}clocks/", self.prefix())
    }

    /// The key of the clock published under `lease`: its ID in 16
    /// hexadecimal digits, so that the keys sort as the IDs do.
    pub(crate) fn clock_key(&self, lease: i64) -> String {
        format!("{}{lease:016x}", self.clocks_prefix())
    }

    /// The lease a clock key was published under: [`clock_key`]'s inverse;
    /// `None` for a key it did not make.
    ///
    /// [`clock_key`]: ClusterConfig::clock_key
    pub(crate) fn lease_of_clock_key(&self, key: &[u8]) -> Option<i64> {
        let hex = std::str::from_utf8(key)
            .ok()?
            .strip_prefix(&self.clocks_prefix())?;
        // Written as the lease's 64 bits: a negative lease reads back whole.
        u64::from_str_radix(hex, 16).ok().map(|bits| bits as i64)
    }

    /// The key `cluster status` puts to ask every node for its clock now.
    pub(crate) fn probe_key(&self) -> String {
        format!("{}probe", self.prefix())
    }
}

#[cfg(test)]
impl ClusterConfig {
    /// What the unit tests build on: cluster `test` of the twitter layout,
    /// a lease of 2 s, a manual clock, and an endpoint never dialled
    /// (etcd-client connects lazily).
    pub(crate) fn for_tests() -> ClusterConfig {
        let clock = Arc::new(snowflake::ManualClock::new(1_700_000_000_000));
        ClusterConfig::new(vec!["http://127.0.0.1:9".into()], Layout::twitter())
            .with_name("test")
            .with_lease_ttl(Duration::from_secs(2))
            .with_clock(clock)
            .with_hostname("test")
    }
}

/// What a slot's key records about its holder.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct NodeInfo {
    /// The host the node runs on.
    pub hostname: String,
    /// Its process ID.
    pub pid: u32,
    /// Where its API listens.
    pub address: String,
    /// When it claimed the slot, Unix ms (set on claim).
    #[serde(default)]
    pub since_ms: i64,
}

impl NodeInfo {
    /// This host's name and this process, listening nowhere yet.
    pub fn of_this_process() -> NodeInfo {
        NodeInfo {
            hostname: hostname(),
            pid: std::process::id(),
            address: String::new(),
            since_ms: 0,
        }
    }
}

/// The host's name as the kernel has it, else `$HOSTNAME`, else `unknown`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// Connects to etcd with the config's TLS and credentials.
pub async fn connect(config: &ClusterConfig) -> Result<Client, Error> {
    let mut options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(2))
        .with_timeout(Duration::from_secs(2))
        .with_keep_alive(Duration::from_secs(1), Duration::from_secs(1));
    if let Some((user, password)) = &config.auth {
        options = options.with_user(user.clone(), password.clone());
    }
    // etcd-client refuses TLS options with http:// endpoints.
    if config.endpoints.iter().any(|e| e.starts_with("https://")) {
        options = options.with_tls(config.tls.options());
    }
    // Calls go round the members, not by etcd-client's balancer, which
    // keeps sending a share of them to a member it cannot reach (see
    // `members`). With credentials, connecting is a call: a client that
    // started at a member that is gone is made again, starting elsewhere.
    past_refusals(config.endpoints.len(), || {
        Client::connect_with_balanced_channel(&config.endpoints, Some(options.clone()), InTurn)
    })
    .await
    .map_err(Error::Connect)
}

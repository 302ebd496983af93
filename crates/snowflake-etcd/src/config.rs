//! How a node joins a cluster, and how it connects to etcd.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};
use serde::{Deserialize, Serialize};
use snowflake::{Clock, Layout};

use crate::error::Error;
use crate::members::{InTurn, past_refusals};

/// How a node joins a cluster.
#[derive(Clone)]
pub struct ClusterConfig {
    /// etcd endpoints, e.g. `http://127.0.0.1:2379`.
    pub endpoints: Vec<String>,
    /// The cluster's name: the key prefix that separates clusters.
    pub name: String,
    /// The layout whose node fields are the slots.
    pub layout: Layout,
    /// Node fields the user fixed (e.g. `datacenter=3`): only slots with
    /// these values are claimed.
    pub fixed: Vec<(String, u64)>,
    /// The lease's time to live.
    pub lease_ttl: Duration,
    /// How long before the lease could expire the node stops issuing.
    pub margin: Duration,
    /// Clock step back the generator waits out.
    pub tolerance_ms: u64,
    /// How far ahead the mark is reserved.
    pub reserve_ms: u64,
    /// The clock the generator reads.
    pub clock: Arc<dyn Clock>,
    /// What the slot key says about this node.
    pub info: NodeInfo,
    /// The clock skew between nodes beyond which the node logs a warning
    /// (see `skew`).
    pub max_clock_skew_ms: u64,
    /// User name and password for etcd, if it requires them.
    pub auth: Option<(String, String)>,
    /// TLS settings, used when the endpoints are `https://`.
    pub tls: TlsConfig,
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
            .field("margin", &self.margin)
            .field("max_clock_skew_ms", &self.max_clock_skew_ms)
            .field("tls", &self.tls)
            .field("auth", &self.auth.as_ref().map(|(user, _)| user))
            .finish_non_exhaustive()
    }
}

impl ClusterConfig {
    /// The clock skew between nodes beyond which a node warns, unless told
    /// otherwise: 100 ms.
    pub const DEFAULT_MAX_CLOCK_SKEW_MS: u64 = 100;

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

/// What a slot's key records about its holder.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
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

//! Cluster mode: settings from flags, the adapter that lets the server
//! issue from a leased slot without knowing of etcd, and
//! `snowflake cluster status`.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use snowflake::{Clock, Layout, SharedGenerator};
use snowflake_etcd::{Cluster, ClusterConfig, Holder, NotReady, Offset, SlotHolder, TlsConfig};
use snowflake_server::{IdSource, Shutdown, Unavailable};

use crate::args::{ClusterStatusArgs, EtcdArgs, ServeArgs};
use crate::failure::Failure;
use crate::output::{escape_controls, json_line, report};
use crate::usage::UsageError;

/// This binary has cluster mode.
pub fn available() -> Result<(), Failure> {
    Ok(())
}

/// Joins the cluster as the node serving at `addr`; returns at once, and
/// the source is ready when it holds a slot.
pub fn source(
    args: &ServeArgs,
    layout: &Layout,
    node: Vec<(String, u64)>,
    addr: SocketAddr,
) -> Result<Arc<dyn IdSource>, Failure> {
    let config = config(&args.etcd, layout, node)?
        .with_lease_ttl(Duration::from_secs(args.lease_ttl))
        .with_address(format!("http://{addr}/"))
        .with_max_clock_skew_ms(args.max_clock_skew_ms);
    tracing::info!(endpoints = ?config.endpoints(), name = %config.name(), "joining the cluster");
    let clock = Arc::clone(config.clock());
    Ok(Arc::new(ClusterSource {
        cluster: Cluster::start(config),
        layout: layout.clone(),
        clock,
    }))
}

/// A slot leased on etcd, as the server sees a source of IDs.
struct ClusterSource {
    cluster: Cluster,
    layout: Layout,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ClusterSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSource")
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

impl IdSource for ClusterSource {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    fn current(&self) -> Result<Arc<SharedGenerator>, Unavailable> {
        self.cluster
            .current()
            .map(|holding| Arc::clone(&holding.generator))
            .map_err(unavailable)
    }

    /// The fence is checked again after the IDs were made, so IDs made while
    /// the process was paused past its lease are never handed out.
    fn still_valid(&self, generator: &Arc<SharedGenerator>) -> bool {
        self.cluster.still_issuing(generator)
    }

    fn status(&self) -> serde_json::Map<String, serde_json::Value> {
        let status = self.cluster.status();
        let mut fields = serde_json::Map::new();
        fields.insert("slot".into(), status.slot.into());
        fields.insert("lease_remaining_s".into(), status.lease_remaining_s.into());
        fields.insert("fencing_events".into(), status.fencing_events.into());
        fields.insert(
            "clock_skew".into(),
            serde_json::to_value(&status.clock_skew).unwrap_or_default(),
        );
        fields
    }

    fn publish_metrics(&self) {
        let status = self.cluster.status();
        metrics::counter!("snowflake_cluster_fencing_events_total").absolute(status.fencing_events);
        metrics::gauge!("snowflake_cluster_lease_remaining_seconds")
            .set(status.lease_remaining_s.unwrap_or(0.0));
        metrics::gauge!("snowflake_cluster_slot_held").set(if status.slot.is_some() {
            1.0
        } else {
            0.0
        });
        // NaN until a clock is measured: no number is better than a made-up 0.
        let skew = &status.clock_skew;
        let seconds = |ms: Option<f64>| ms.map_or(f64::NAN, |ms| ms / 1e3);
        metrics::gauge!("snowflake_cluster_clock_max_offset_seconds")
            .set(seconds(skew.max_offset_ms));
        metrics::gauge!("snowflake_cluster_clock_offset_bound_seconds").set(seconds(skew.bound_ms));
        metrics::gauge!("snowflake_cluster_clock_nodes_measured").set(skew.nodes as f64);
    }

    fn shutdown(self: Arc<Self>) -> Shutdown {
        Box::pin(async move {
            self.cluster.shutdown().await;
            Ok(())
        })
    }
}

/// Why the node cannot issue, as the server takes it: a node that only an
/// operator can make ready ([`NotReady::needs_operator`]: a damaged mark in
/// etcd) is answered without `Retry-After`, since waiting will not help.
fn unavailable(why: NotReady) -> Unavailable {
    if why.needs_operator() {
        Unavailable::needs_operator(why.reason())
    } else {
        Unavailable::new(why.reason())
    }
}

/// The password never comes from a flag, where `ps` would show it.
const PASSWORD_ENV: &str = "SNOWFLAKE_ETCD_PASSWORD";

/// The node's settings from the flags that say where the cluster lives,
/// checked; the rest at `ClusterConfig`'s defaults, for the caller to set.
pub fn config(
    etcd: &EtcdArgs,
    layout: &Layout,
    fixed: Vec<(String, u64)>,
) -> Result<ClusterConfig, Failure> {
    snowflake_etcd::slot_space(layout, &fixed)?;
    // The name is part of every key: keep it to one path segment, so that
    // clusters with different names share nothing.
    let name = &etcd.cluster;
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return Err(Failure::Argument(UsageError::new(
            "cluster",
            name,
            "a cluster name is 1 to 64 letters, digits, '-', '_' or '.'",
        )));
    }
    let endpoints = endpoints(etcd)?;
    check_transport(etcd, &endpoints)?;
    let tls = TlsConfig {
        ca_pem: etcd
            .etcd_ca
            .as_deref()
            .map(|p| read_pem(p, "etcd_ca", "CERTIFICATE"))
            .transpose()?,
        identity: match (&etcd.etcd_cert, &etcd.etcd_key) {
            (Some(cert), Some(key)) => Some((
                read_pem(cert, "etcd_cert", "CERTIFICATE")?,
                read_pem(key, "etcd_key", "PRIVATE KEY")?,
            )),
            _ => None,
        },
    };
    let config = ClusterConfig::new(endpoints, layout.clone())
        .with_name(name)
        .with_fixed(fixed)
        .with_tls(tls);
    match &etcd.etcd_user {
        None => Ok(config),
        Some(user) => {
            let password = std::env::var(PASSWORD_ENV).map_err(|_| {
                UsageError::new(
                    "etcd_user",
                    user,
                    "set its password in SNOWFLAKE_ETCD_PASSWORD",
                )
            })?;
            Ok(config.with_auth(user, password))
        }
    }
}

/// The endpoints, each an http(s) URL with a host and port, so that a typo
/// fails here with status 2 rather than as a node that is never ready.
fn endpoints(etcd: &EtcdArgs) -> Result<Vec<String>, UsageError> {
    let endpoints: Vec<String> = etcd
        .etcd
        .iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    if endpoints.is_empty() {
        return Err(UsageError::new(
            "etcd",
            "\"\"",
            "give one or more etcd endpoints, such as http://127.0.0.1:2379",
        ));
    }
    for endpoint in &endpoints {
        let rest = endpoint
            .strip_prefix("http://")
            .or_else(|| endpoint.strip_prefix("https://"));
        let ok = rest.is_some_and(|r| {
            r.rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
        });
        if !ok {
            return Err(UsageError::new(
                "etcd",
                endpoint,
                "an endpoint is http://HOST:PORT or https://HOST:PORT",
            ));
        }
    }
    Ok(endpoints)
}

/// Refuses settings that would not do what they say: endpoints of both
/// schemes (etcd-client uses one TLS setting for all), TLS files with
/// http:// endpoints (they would be ignored), and a password sent in clear
/// text over http:// unless the operator says that is intended.
fn check_transport(etcd: &EtcdArgs, endpoints: &[String]) -> Result<(), UsageError> {
    let https = endpoints
        .iter()
        .filter(|e| e.starts_with("https://"))
        .count();
    if https != 0 && https != endpoints.len() {
        return Err(UsageError::new(
            "etcd",
            &endpoints.join(","),
            "endpoints are all http:// or all https://",
        ));
    }
    if https == 0 {
        let tls_file = [
            ("etcd_ca", &etcd.etcd_ca),
            ("etcd_cert", &etcd.etcd_cert),
            ("etcd_key", &etcd.etcd_key),
        ]
        .into_iter()
        .find_map(|(field, path)| path.as_ref().map(|p| (field, p)));
        if let Some((field, path)) = tls_file {
            return Err(UsageError::new(
                field,
                &path.display().to_string(),
                "TLS files need https:// endpoints; the --etcd endpoints are http://",
            ));
        }
        if let Some(user) = &etcd.etcd_user
            && !etcd.etcd_allow_plaintext_password
        {
            return Err(UsageError::new(
                "etcd_user",
                user,
                "over http:// endpoints the password would cross the network in clear text; \
                     use https:// endpoints, or pass --etcd-allow-plaintext-password if that is intended",
            ));
        }
    }
    Ok(())
}

/// Reads a PEM file, checking that it holds a `kind` block, so that a
/// swapped or empty file fails here rather than as a node that never
/// connects.
fn read_pem(path: &Path, field: &'static str, kind: &str) -> Result<Vec<u8>, Failure> {
    let pem = std::fs::read(path).map_err(|err| {
        Failure::Runtime(format!(
            "cannot read --{} {}: {err}",
            field.replace('_', "-"),
            path.display()
        ))
    })?;
    let text = String::from_utf8_lossy(&pem);
    let holds = text
        .lines()
        .any(|line| line.starts_with("-----BEGIN ") && line.ends_with(&format!("{kind}-----")));
    if !holds {
        return Err(Failure::Argument(UsageError::new(
            field,
            &path.display().to_string(),
            "the file is not PEM of the expected kind (a CERTIFICATE for --etcd-ca and --etcd-cert, a PRIVATE KEY for --etcd-key)",
        )));
    }
    Ok(pem)
}

/// A holder's clock against the caller's, as the table shows it: `?`
/// when it did not answer the probe.
fn clock(offset: Option<Offset>) -> String {
    match offset {
        Some(o) => format!("{:+.1} ±{:.1} ms", o.offset_ms, o.bound_ms),
        None => "?".into(),
    }
}

pub fn status(args: &ClusterStatusArgs) -> Result<String, Failure> {
    let layout = args.layout.resolve()?;
    let config = config(&args.etcd, &layout, Vec::new())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Failure::Runtime(format!("cannot start the runtime: {err}")))?;
    let mut holders = runtime
        .block_on(snowflake_etcd::holders(&config))
        .map_err(|err| Failure::Runtime(err.to_string()))?;
    // A key under no lease (written by hand) has no node to answer.
    let leases: Vec<i64> = holders
        .iter()
        .map(|h| h.lease)
        .filter(|&l| l != 0)
        .collect();
    if !leases.is_empty() {
        let probed = snowflake_etcd::probe_clocks(&config, &leases, snowflake_etcd::PROBE_WAIT);
        // Without write access to etcd the table is still worth having.
        match runtime.block_on(probed) {
            Ok(offsets) => {
                for holder in &mut holders {
                    holder.clock = offsets.get(&holder.lease).copied();
                }
            }
            Err(err) => report(&format!("{err}; the clock column is left empty")),
        }
    }
    Ok(if args.json {
        json_line(&holders)
    } else {
        table(config.name(), &holders)
    })
}

/// The slots in use as a table. Every value in it was read from etcd, where
/// anyone who may write may have put anything: control characters are shown
/// escaped, so that no value can forge a line or drive the terminal, and a
/// slot whose holder cannot be read is listed as such, never left out.
fn table(cluster: &str, holders: &[SlotHolder]) -> String {
    if holders.is_empty() {
        return format!("no slots in use in cluster {cluster:?}\n");
    }
    let mut out = format!(
        "{:<28} {:<20} {:>8}  {:<18} {:<28} {}\n",
        "slot", "hostname", "pid", "clock", "since", "address"
    );
    for h in holders {
        let slot = escape_controls(&h.slot);
        let row = match &h.holder {
            Holder::Node { node, since } => format!(
                "{slot:<28} {:<20} {:>8}  {:<18} {since:<28} {}",
                escape_controls(&node.hostname),
                node.pid,
                clock(h.clock),
                escape_controls(&node.address)
            ),
            Holder::Unreadable { unreadable } => {
                format!(
                    "{slot:<28} (occupied, unreadable: {})",
                    escape_controls(unreadable)
                )
            }
        };
        out.push_str(&row);
        if let Some(damaged) = &h.mark_error {
            out.push_str(&format!("  (mark damaged: {})", escape_controls(damaged)));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use snowflake_etcd::NodeInfo;

    use super::*;
    use crate::args::{Cli, ClusterCommand, Command};

    fn etcd_args(line: &[&str]) -> EtcdArgs {
        let argv = ["snowflake", "cluster", "status"].iter().chain(line);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Cluster(ClusterCommand::Status(args)) => args.etcd,
            other => panic!("parsed as {other:?}"),
        }
    }

    fn transport(line: &[&str]) -> Result<(), UsageError> {
        let etcd = etcd_args(line);
        check_transport(&etcd, &endpoints(&etcd)?)
    }

    /// The cluster flags' defaults are typed in `args.rs`, which builds
    /// without cluster mode too: each must be the library's, and a node
    /// started with no cluster flag but `--etcd` must have every setting
    /// `ClusterConfig::new` gives.
    #[test]
    fn the_cluster_flags_defaults_are_the_librarys() {
        let argv = ["snowflake", "serve", "--etcd", "http://127.0.0.1:9"];
        let Command::Serve(args) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not serve");
        };
        assert_eq!(
            args.lease_ttl,
            ClusterConfig::DEFAULT_LEASE_TTL.as_secs(),
            "--lease-ttl"
        );
        assert_eq!(
            args.max_clock_skew_ms,
            ClusterConfig::DEFAULT_MAX_CLOCK_SKEW_MS,
            "--max-clock-skew-ms"
        );
        assert_eq!(args.etcd.cluster, ClusterConfig::DEFAULT_NAME, "--cluster");
        assert_eq!(
            etcd_args(&["--etcd", "http://127.0.0.1:9"]).cluster,
            ClusterConfig::DEFAULT_NAME,
            "cluster status --cluster"
        );
        let layout = Layout::twitter();
        let built = config(&args.etcd, &layout, Vec::new())
            .unwrap()
            .with_lease_ttl(Duration::from_secs(args.lease_ttl))
            .with_max_clock_skew_ms(args.max_clock_skew_ms);
        let library = ClusterConfig::new(vec!["http://127.0.0.1:9".into()], layout);
        assert_eq!(format!("{built:?}"), format!("{library:?}"));
        assert_eq!(
            (built.tolerance_ms(), built.reserve_ms()),
            (library.tolerance_ms(), library.reserve_ms())
        );
    }

    #[test]
    fn a_holders_clock_shows_its_offset_and_bound_or_that_it_did_not_answer() {
        let mut holder = held("datacenter=0,machine=1", "h", "http://a/");
        holder.clock = Some(Offset {
            offset_ms: 500.04,
            bound_ms: 1.26,
        });
        let behind = SlotHolder {
            clock: Some(Offset {
                offset_ms: -3.0,
                bound_ms: 0.5,
            }),
            ..held("datacenter=0,machine=2", "h", "http://b/")
        };
        let silent = held("datacenter=0,machine=3", "h", "http://c/");
        let out = table("test", &[holder.clone(), behind, silent]);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].contains(" clock "), "{out}");
        assert!(lines[1].contains("+500.0 ±1.3 ms"), "{out}");
        assert!(lines[2].contains("-3.0 ±0.5 ms"), "{out}");
        assert!(lines[3].contains("  ?  "), "{out}");
        let json: serde_json::Value = serde_json::from_str(&json_line(&[holder])).unwrap();
        assert_eq!(json[0]["clock"]["offset_ms"], 500.04);
        assert_eq!(json[0]["clock"]["bound_ms"], 1.26);
        assert!(json[0].get("lease").is_none());
    }

    #[test]
    fn a_password_over_http_is_refused_unless_the_operator_says_so() {
        let err =
            transport(&["--etcd", "http://10.0.0.1:2379", "--etcd-user", "alice"]).unwrap_err();
        assert_eq!(err.field(), "etcd_user");
        let message = err.to_string();
        assert!(message.contains("alice"), "{message}");
        assert!(message.contains("clear text"), "{message}");
        assert!(
            message.contains("--etcd-allow-plaintext-password"),
            "{message}"
        );
        transport(&[
            "--etcd",
            "http://10.0.0.1:2379",
            "--etcd-user",
            "alice",
            "--etcd-allow-plaintext-password",
        ])
        .unwrap();
        transport(&["--etcd", "https://10.0.0.1:2379", "--etcd-user", "alice"]).unwrap();
        // No user, no password, nothing to protect.
        transport(&["--etcd", "http://10.0.0.1:2379"]).unwrap();
    }

    #[test]
    fn endpoints_of_both_schemes_are_refused() {
        let err = transport(&["--etcd", "https://a:2379,http://b:2379"]).unwrap_err();
        assert!(
            err.to_string().contains("all http:// or all https://"),
            "{err}"
        );
    }

    #[test]
    fn tls_files_with_http_endpoints_are_refused_naming_the_flag() {
        let err = transport(&["--etcd", "http://a:2379", "--etcd-ca", "ca.pem"]).unwrap_err();
        assert!(err.to_string().starts_with("etcd_ca ca.pem"), "{err}");
        let err = transport(&[
            "--etcd",
            "http://a:2379",
            "--etcd-cert",
            "c.pem",
            "--etcd-key",
            "k.pem",
        ])
        .unwrap_err();
        assert!(err.to_string().starts_with("etcd_cert c.pem"), "{err}");
        transport(&[
            "--etcd",
            "https://a:2379",
            "--etcd-cert",
            "c.pem",
            "--etcd-key",
            "k.pem",
        ])
        .unwrap();
    }

    #[test]
    fn a_client_certificate_needs_its_key_and_the_key_its_certificate() {
        for line in [
            ["snowflake", "cluster", "status", "--etcd-cert", "c.pem"],
            ["snowflake", "cluster", "status", "--etcd-key", "k.pem"],
        ] {
            let err = Cli::try_parse_from(line).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        }
    }

    #[test]
    fn pem_files_must_hold_what_their_flag_expects() {
        let dir = std::env::temp_dir().join(format!("snowflake-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cert = dir.join("cert.pem");
        let key = dir.join("key.pem");
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        std::fs::write(
            &key,
            "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n",
        )
        .unwrap();
        assert!(read_pem(&cert, "etcd_cert", "CERTIFICATE").is_ok());
        assert!(read_pem(&key, "etcd_key", "PRIVATE KEY").is_ok());
        // Swapped: the key where the certificate belongs.
        match read_pem(&key, "etcd_cert", "CERTIFICATE") {
            Err(Failure::Argument(err)) => assert_eq!(err.field(), "etcd_cert", "{err}"),
            other => panic!("{other:?}"),
        }
        match read_pem(&dir.join("missing.pem"), "etcd_ca", "CERTIFICATE") {
            Err(Failure::Runtime(message)) => {
                assert!(message.starts_with("cannot read --etcd-ca "), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn held(slot: &str, hostname: &str, address: &str) -> SlotHolder {
        SlotHolder {
            slot: slot.into(),
            holder: Holder::Node {
                node: NodeInfo {
                    hostname: hostname.into(),
                    pid: 42,
                    address: address.into(),
                    since_ms: 0,
                },
                since: "1970-01-01T00:00:00.000Z".into(),
            },
            mark_ms: Some(1),
            mark_error: None,
            lease: 1,
            clock: None,
        }
    }

    #[test]
    fn what_etcd_holds_cannot_forge_a_line_of_the_table_or_drive_the_terminal() {
        let forged = "evil\ndatacenter=9,machine=9       forged                      1  ";
        let holders = [
            held("datacenter=0,machine=1", forged, "http://a/\u{1b}[2J"),
            held("datacenter=0,machine=2\r", "ok", "http://b/"),
        ];
        let out = table("test", &holders);
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(!out.lines().any(|l| l.starts_with("datacenter=9")), "{out}");
        assert!(out.contains("evil\\ndatacenter=9"), "{out}");
        assert!(out.contains("http://a/\\u{1b}[2J"), "{out}");
        assert!(out.contains("datacenter=0,machine=2\\r"), "{out}");
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        // The JSON form is one line too: serde escapes the newline.
        assert_eq!(json_line(&holders).lines().count(), 1);
    }

    #[test]
    fn an_unreadable_slot_is_listed_as_occupied_and_a_damaged_mark_as_damaged() {
        let mut damaged = held("datacenter=0,machine=1", "h", "http://a/");
        damaged.mark_ms = None;
        damaged.mark_error = Some("\"x\\n\", not a time in Unix milliseconds".into());
        let unreadable = SlotHolder {
            slot: "datacenter=0,machine=2".into(),
            holder: Holder::Unreadable {
                unreadable: "not a holder record: expected value\nat line 1".into(),
            },
            mark_ms: None,
            mark_error: None,
            lease: 2,
            clock: None,
        };
        let out = table("test", &[damaged, unreadable]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(
            lines[1].ends_with("(mark damaged: \"x\\n\", not a time in Unix milliseconds)"),
            "{out}"
        );
        assert!(lines[2].starts_with("datacenter=0,machine=2"), "{out}");
        assert!(
            lines[2].contains(
                "(occupied, unreadable: not a holder record: expected value\\nat line 1)"
            ),
            "{out}"
        );
        assert_eq!(table("test", &[]), "no slots in use in cluster \"test\"\n");
    }
}

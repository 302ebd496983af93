//! Reaching etcd: mutual TLS, a password refused over plain http, and
//! members that refuse connections.

use snowflake::Layout;
use snowflake_etcd::ClusterConfig;

use super::*;
use crate::support::free_port;

/// The whole refusal, as an operator sees it: exit 2 and one line that says
/// why and how to proceed, before any connection is tried.
#[test]
fn a_password_over_http_is_refused_with_exit_2() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("snowflake"))
        .args(["cluster", "status", "--etcd", "http://127.0.0.1:9"])
        .args(["--etcd-user", "alice"])
        .env("SNOWFLAKE_ETCD_PASSWORD", "secret")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--etcd-allow-plaintext-password"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "{stderr}");
}

/// Mutual TLS end to end: etcd wants a client certificate; a node given
/// the CA and its certificate joins and issues; without the certificate it
/// is refused; without --etcd-ca it trusts the system's roots (here, made
/// to hold the test CA through SSL_CERT_FILE, which the system-roots loader
/// reads), and with the ordinary roots the test CA is not trusted.
#[test]
fn mutual_tls_to_etcd_with_the_given_ca_or_the_systems_roots() {
    let _serial = serial();
    let dir = scratch().join("tls");
    std::fs::create_dir_all(&dir).unwrap();
    make_certificates(&dir);
    let etcd = TlsEtcd::start(&dir);
    let client_cert = ["--etcd-cert", "client.pem", "--etcd-key", "client.key"];
    let with_ca = [&["--etcd-ca", "ca.pem"][..], &client_cert[..]].concat();
    let (ok, stderr) = status_over_tls(&etcd, &dir, &with_ca, &[]);
    assert!(ok, "with the CA and a client certificate: {stderr}");
    let (ok, stderr) = status_over_tls(&etcd, &dir, &["--etcd-ca", "ca.pem"], &[]);
    assert!(
        !ok,
        "etcd accepted a client without a certificate: {stderr}"
    );
    let roots = dir.join("ca.pem");
    let (ok, stderr) = status_over_tls(&etcd, &dir, &client_cert, &[("SSL_CERT_FILE", &roots)]);
    assert!(
        ok,
        "without --etcd-ca, the system's roots (SSL_CERT_FILE): {stderr}"
    );
    let (ok, stderr) = status_over_tls(&etcd, &dir, &client_cert, &[]);
    assert!(!ok, "the test CA was trusted without being given");
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");
    // A node joins over mutual TLS and issues.
    let pem = |name: &str| dir.join(name).display().to_string();
    let (ca, cert, key) = (pem("ca.pem"), pem("client.pem"), pem("client.key"));
    let tls = ["--etcd-ca", &ca, "--etcd-cert", &cert, "--etcd-key", &key];
    let mut node = Node::start(&etcd.endpoint, &tls);
    node.wait_ready(Duration::from_secs(20));
    assert_eq!(node.ids(100).len(), 100);
    drop(node);
    drop(etcd);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client (`snowflake_etcd::connect`, as every node and `cluster status`
/// make theirs) whose endpoints list three members that refuse connections
/// between the three that answer sends each of them a call now and then,
/// not a share of all calls: a member that failed is avoided for a while
/// that doubles with each failure in a row, from half a second. So in `t`
/// seconds each costs at most 1 + log2(2t + 1) failed calls; one more is
/// the slack. (etcd-client's own balancer sent them about a third of the
/// calls.)
#[test]
fn members_that_refuse_connections_cost_a_client_a_call_now_and_then() {
    let scene = Scene::start();
    let refusing: Vec<String> = (0..3)
        .map(|_| format!("http://127.0.0.1:{}", free_port()))
        .collect();
    let endpoints = (0..3)
        .flat_map(|i| [scene.etcd.member(i).to_string(), refusing[i].clone()])
        .collect();
    let config = ClusterConfig::new(endpoints, Layout::twitter()).with_name("test");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (calls, failed, took) = runtime.block_on(async {
        let mut client = snowflake_etcd::connect(&config).await.unwrap();
        let (start, calls) = (Instant::now(), 150);
        let mut failed = 0;
        for i in 0..calls {
            let put = client.put("/snowflake/test/calls", i.to_string(), None);
            if put.await.is_err() {
                failed += 1;
            }
        }
        (calls, failed, start.elapsed())
    });
    let each = 2.0 + (2.0 * took.as_secs_f64() + 1.0).log2();
    assert!(
        f64::from(failed) <= refusing.len() as f64 * each,
        "{failed} of {calls} calls failed in {took:?}: more than {each:.1} for each of the \
         {} members that refuse connections",
        refusing.len()
    );
}

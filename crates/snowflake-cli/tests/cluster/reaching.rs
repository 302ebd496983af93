//! Reaching etcd: mutual TLS, a password refused over plain http, and
//! endpoints that refuse connections among those that answer.

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

/// Endpoints that refuse connections (members that died, or were removed
/// but are still listed), before, between and after the live members: the
/// node's calls go round the members that answer, and a mark top-up that
/// one refused is sent again at once to another, so none is lost to them
/// and the mark stays the reserve plus most of the TTL ahead. (etcd-client's
/// own balancer sent a refusing member as many calls as a live one: with
/// four of seven refusing, about half the top-ups failed.)
#[test]
fn endpoints_that_refuse_connections_cost_the_node_no_mark_top_up() {
    let scene = Scene::start();
    // Free a moment ago, and listened on by nobody: connecting is refused.
    let refusing: Vec<String> = (0..4)
        .map(|_| format!("http://127.0.0.1:{}", free_port()))
        .collect();
    let live: Vec<&str> = (0..3).map(|i| scene.etcd.member(i)).collect();
    let endpoints = [&refusing[..2], &[live[0].to_string()], &refusing[2..]]
        .concat()
        .into_iter()
        .chain([live[1].to_string(), live[2].to_string()])
        .collect::<Vec<_>>()
        .join(",");
    let ttl_s = 3;
    let mut node = Node::start(&endpoints, &["--lease-ttl", &ttl_s.to_string()]);
    node.wait_ready(Duration::from_secs(20));
    // Ten renewals' worth, each with its top-up, while the node issues.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2 * ttl_s) {
        assert_eq!(node.ids(100).len(), 100, "{}", node.describe());
        std::thread::sleep(Duration::from_millis(50));
    }
    let lost: Vec<String> = node
        .log()
        .lines()
        .filter(|line| line.contains("cannot move the mark ahead") && line.contains("connect"))
        .map(String::from)
        .collect();
    assert!(
        lost.is_empty(),
        "{} top-ups of the mark were lost to members that refuse connections\n{}",
        lost.len(),
        node.describe()
    );
    // As in the leader's loss (`fence.rs`): the reserve plus three fifths
    // of the TTL ahead, less any delay; half that excess is the bound.
    let (reserve, ttl) = (
        snowflake::Generator::DEFAULT_RESERVE_MS as i64,
        ttl_s as i64 * 1000,
    );
    let slot = node.slot();
    let ahead = stored_mark(&scene, &slot) - now_ms();
    assert!(
        ahead > reserve + ttl * 3 / 10 && ahead <= reserve + ttl,
        "the mark of {slot} is {ahead} ms ahead of the clock\n{}",
        node.describe()
    );
    assert_eq!(
        node.ready().unwrap()["fencing_events"],
        0,
        "{}",
        node.describe()
    );
    assert_no_duplicates(&[&node]);
}

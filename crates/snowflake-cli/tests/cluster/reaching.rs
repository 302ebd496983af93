//! Reaching etcd: mutual TLS, and a password refused over plain http.

use super::*;

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

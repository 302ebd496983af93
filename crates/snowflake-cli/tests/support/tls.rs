//! etcd that speaks only TLS to clients and wants a client certificate,
//! with a CA and certificates made by openssl for the test.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::node::status_command;
use crate::support::{free_port, http};

/// Runs `openssl` in `dir`, failing the test with its output if it fails.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run openssl to make the test certificates: {err}"));
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, all
/// made here with openssl and valid for two days.
pub fn make_certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"]);
    ca.extend(["-subj", "/CN=snowflake-test-ca"]);
    ca.extend(["-addext", "basicConstraints=critical,CA:TRUE"]);
    ca.extend(["-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
    openssl(dir, &ca);
    let uses = [
        (
            "server",
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
        ),
        (
            "client",
            "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n",
        ),
    ];
    for (who, extensions) in uses {
        std::fs::write(dir.join(format!("{who}.ext")), extensions).unwrap();
        let (key, csr, pem) = (
            format!("{who}.key"),
            format!("{who}.csr"),
            format!("{who}.pem"),
        );
        let mut req = vec!["req"];
        req.extend(ec);
        req.extend(["-keyout", &key, "-out", &csr, "-subj"]);
        let subject = format!("/CN={who}");
        req.push(&subject);
        openssl(dir, &req);
        let ext = format!("{who}.ext");
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &pem,
                "-days",
                "2",
                "-extfile",
                &ext,
            ],
        );
    }
}

/// One etcd member that speaks only TLS to clients and wants a client
/// certificate signed by the test CA; killed when dropped. Its ports are
/// picked free and tried up to three times, as for [`crate::etcd::Etcd`].
pub struct TlsEtcd {
    child: Child,
    pub endpoint: String,
}

impl TlsEtcd {
    pub fn start(dir: &Path) -> TlsEtcd {
        let mut failures = Vec::new();
        for attempt in 0..3 {
            let (client, peer, metrics) = (free_port(), free_port(), free_port());
            let log = dir.join(format!("etcd-{attempt}.log"));
            let mut child = Command::new("etcd")
                .current_dir(dir)
                .args([
                    "--name=tls".to_string(),
                    format!("--data-dir=data-{attempt}"),
                    format!("--listen-client-urls=https://127.0.0.1:{client}"),
                    format!("--advertise-client-urls=https://127.0.0.1:{client}"),
                    format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                    format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                    format!("--initial-cluster=tls=http://127.0.0.1:{peer}"),
                    // Health over plain HTTP, for the test to poll.
                    format!("--listen-metrics-urls=http://127.0.0.1:{metrics}"),
                    "--cert-file=server.pem".into(),
                    "--key-file=server.key".into(),
                    "--client-cert-auth".into(),
                    "--trusted-ca-file=ca.pem".into(),
                    "--logger=zap".into(),
                    "--log-level=error".into(),
                ])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let metrics = format!("127.0.0.1:{metrics}");
                // And still running: etcd exits when it cannot bind. An
                // impostor on one of its ports could only fail the test (its
                // TLS handshakes, with the test's CA), never pass it.
                if let Some((200, body)) = http(&metrics, "GET", "/health", "")
                    && body.contains("true")
                    && child.try_wait().unwrap().is_none()
                {
                    return TlsEtcd {
                        child,
                        endpoint: format!("https://127.0.0.1:{client}"),
                    };
                }
                if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    failures.push(std::fs::read_to_string(&log).unwrap_or_default());
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!(
            "etcd with TLS did not start in three tries:\n{}",
            failures.join("\n")
        );
    }
}

impl Drop for TlsEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cluster status` against `etcd` with `flags`: success, and stderr.
pub fn status_over_tls(
    etcd: &TlsEtcd,
    dir: &Path,
    flags: &[&str],
    env: &[(&str, &Path)],
) -> (bool, String) {
    let mut command = status_command(&etcd.endpoint);
    command
        .current_dir(dir)
        .args(flags)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR");
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

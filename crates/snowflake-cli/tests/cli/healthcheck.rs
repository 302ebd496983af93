//! `healthcheck`: a served binary asked over a real socket, a stopped one,
//! a listener that is not HTTP, and targets it refuses.

use crate::support::{Printed, Served, free_port, http, snowflake};

/// A running service answers 200 to both checks; a path it does not have
/// answers 404 and fails the check; a port nobody listens on fails it with
/// no answer. Each line says which URL.
#[test]
fn healthcheck_asks_a_real_service() {
    let served = Served::with_args(&["--machine", "3"]);
    let addr = served.addr.clone();
    // What the check reads is what a plain request gets.
    assert_eq!(
        http(&addr, "GET", "/readyz", "").map(|(status, _)| status),
        Some(200)
    );
    snowflake()
        .args(["healthcheck", "--listen", &addr])
        .assert()
        .success()
        .stdout(format!(
            "200 http://{addr}/healthz\n200 http://{addr}/readyz\n"
        ));
    // The environment variable `serve` reads gives the address too.
    snowflake()
        .arg("healthcheck")
        .env("SNOWFLAKE_LISTEN", &addr)
        .assert()
        .success();
    snowflake()
        .args(["healthcheck", &format!("http://{addr}/readyz"), "/nowhere"])
        .args(["--listen", &addr])
        .assert()
        .code(1)
        .stdout(format!(
            "200 http://{addr}/readyz\n404 http://{addr}/nowhere\n"
        ))
        .stderr("error: 1 of 2 checks failed\n");
    served.terminate();
    // Stopped: nobody answers.
    let stdout = snowflake()
        .args(["healthcheck", "--listen", &addr, "--timeout", "2"])
        .assert()
        .code(1)
        .stdout_text();
    assert!(
        stdout.starts_with(&format!("no answer from http://{addr}/healthz: ")),
        "{stdout}"
    );
    // A listener that is not HTTP.
    let port = free_port();
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let speaker = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut conn, _) = listener.accept().unwrap();
        // The whole request is read first, and the client's close awaited
        // after, so that no unread byte turns the close into a reset.
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") {
            conn.read_exact(&mut byte).unwrap();
            request.push(byte[0]);
        }
        conn.write_all(b"SSH-2.0-OpenSSH\r\n").unwrap();
        // The client may have read its 12 bytes and gone already.
        let _ = conn.shutdown(std::net::Shutdown::Write);
        let _ = conn.read_to_end(&mut request);
    });
    snowflake()
        .args([
            "healthcheck",
            "/healthz",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .assert()
        .code(1)
        .stdout(predicates::str::contains("not an HTTP answer"));
    speaker.join().unwrap();
}

#[test]
fn bad_targets_exit_2() {
    for (url, expected) in [
        (
            "https://127.0.0.1/readyz",
            "a health check speaks plain HTTP",
        ),
        ("readyz", "give a path such as /readyz"),
    ] {
        snowflake()
            .args(["healthcheck", url])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(expected));
    }
    snowflake()
        .args(["healthcheck", "--listen", "localhost"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("give an address and port"));
}

//! `snowflake serve` as a real process on a real socket: answers, SIGTERM,
//! request logs, bad settings, cluster mode without its feature.

use std::time::Duration;

use snowflake::MarkStore;

use crate::support::{Printed, Scratch, Served, http, snowflake, stderr_of};

/// `snowflake serve` on a real socket: it answers, and on SIGTERM it
/// finishes, exits 0 and leaves the state file at the last ID it issued.
#[test]
fn serve_answers_and_shuts_down_gracefully_on_sigterm() {
    let dir = Scratch::new();
    let state = dir.join("mark");
    let mut command = Served::command();
    command
        .args(["--machine", "9", "--log-format", "json"])
        .env("SNOWFLAKE_STATE_FILE", &state);
    let child = Served::start(command);
    let addr = child.addr.clone();
    let (status, body) = http(&addr, "POST", "/api/v1/ids?count=10", "").unwrap();
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let last: u64 = v["ids"][9].as_str().unwrap().parse().unwrap();
    let twitter = snowflake::Layout::twitter();
    let d = twitter.decode(snowflake::Id::new(last)).unwrap();
    assert_eq!(d.field("machine"), Some(9));
    let (status, _) = http(&addr, "GET", "/readyz", "").unwrap();
    assert_eq!(status, 200);
    // A second service on the same state file, as in a rolling deploy on a
    // shared volume, refuses to start and names the one that holds it.
    let refusal = snowflake()
        .args(["serve", "--machine", "9", "--listen", "127.0.0.1:0"])
        .env("SNOWFLAKE_STATE_FILE", &state)
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stderr_text();
    assert!(
        refusal.contains(&format!(
            "{} is in use by process {}",
            state.display(),
            child.id()
        )),
        "{refusal}"
    );
    let logs = child.terminate();
    // JSON logs, one object a line.
    for line in logs.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let mark = snowflake::FileMarkStore::new(&state).load().unwrap();
    assert_eq!(
        mark,
        Some(d.timestamp_ms()),
        "the mark was not shrunk to the last ID"
    );
}

/// Each request is logged (tower-http's "started" and "finished" lines) when
/// the log level asks for them, and not at the default level.
#[test]
fn serve_traces_requests_only_when_the_log_level_asks() {
    for (filter, traced) in [("info", false), ("info,tower_http=debug", true)] {
        let mut command = Served::command();
        command
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", filter)
            .env("NO_COLOR", "1");
        let child = Served::start(command);
        let (status, body) = http(&child.addr, "GET", "/api/v1/ids", "").unwrap();
        assert_eq!(status, 200, "{body}");
        let logs = child.terminate();
        assert_eq!(
            logs.contains("finished processing request"),
            traced,
            "RUST_LOG={filter}:\n{logs}"
        );
    }
}

#[test]
fn serve_rejects_bad_settings_with_status_2() {
    for (args, message) in [
        (
            &["serve", "--listen", "nowhere"][..],
            "invalid value 'nowhere' for '--listen <ADDR>': give an address and port",
        ),
        (
            &["serve", "--request-timeout", "0"][..],
            "invalid value '0' for '--request-timeout <SECS>': a timeout is 1 to 3600 seconds",
        ),
        (
            &["serve", "--max-concurrency", "lots"][..],
            "invalid value 'lots' for '--max-concurrency <N>': a limit is 1 to 1000000",
        ),
        (
            &["serve", "--lease-ttl", "1"][..],
            "invalid value '1' for '--lease-ttl <SECS>': a lease lives 2 to 600 seconds",
        ),
        (
            &["serve", "--machine", "32"][..],
            "machine 32 is out of range",
        ),
        (
            &["serve", "--layout", "time:41,node:22"][..],
            "has no sequence field",
        ),
    ] {
        let stderr = stderr_of(args, 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// Without the `cluster` feature the binary says how to get cluster mode,
/// in one line, with status 2; it never starts serving.
#[cfg(not(feature = "cluster"))]
#[test]
fn cluster_mode_needs_the_cluster_feature() {
    for args in [
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--etcd",
            "http://127.0.0.1:2379",
        ][..],
        &["cluster", "status", "--etcd", "http://127.0.0.1:2379"][..],
    ] {
        let stderr = snowflake()
            .args(args)
            .timeout(Duration::from_secs(20))
            .assert()
            .code(2)
            .stdout("")
            .stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("cargo build --release -p snowflake-cli --features cluster"),
            "{args:?}: {stderr}"
        );
    }
}

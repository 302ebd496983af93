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
        (&["serve", "--allow-unmask"][..], "--mask-key-file <PATH>"),
        (
            &["serve", "--require-clock-sync", "0"][..],
            "a maximum clock error is 1 to 86400000 milliseconds (a day)",
        ),
        (
            &["serve", "--max-clock-skew-ms", "0"][..],
            "invalid value '0' for '--max-clock-skew-ms <MS>': a clock skew is 1 to 3600000 milliseconds (an hour)",
        ),
        (
            &["serve", "--max-clock-skew-ms", "-5"][..],
            "a clock skew is 1 to 3600000 milliseconds",
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

/// With a key file, the service hands out masked IDs that the key unmasks to
/// its own; a key file that is not a key stops it with status 2 and one
/// line that does not show the file's contents.
#[test]
fn serve_hands_out_masked_ids_with_the_key_file() {
    let dir = Scratch::new();
    let key_hex = "2b7e151628aed2a6abf7158809cf4f3cef4315f3f3a92f01e3f9e0d3c2b1a0f9";
    let key = dir.file("mask.key", &format!("{key_hex}\n"));
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let served = Served::with_args(&["--machine", "9", "--mask-key-file", key.to_str().unwrap()]);
    let (status, body) = http(&served.addr, "POST", "/api/v1/ids?count=5&masked=true", "").unwrap();
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let masker = snowflake_mask::Masker::new(
        &snowflake::Layout::twitter(),
        &snowflake_mask::MaskKey::from_hex(key_hex).unwrap(),
    )
    .unwrap();
    let twitter = snowflake::Layout::twitter();
    for masked in v["ids"].as_array().unwrap() {
        let id = masker
            .unmask(masked.as_str().unwrap().parse::<snowflake::Id>().unwrap())
            .unwrap();
        assert_eq!(twitter.decode(id).unwrap().field("machine"), Some(9));
    }
    // Off by default: the unmask route refuses.
    let (status, _) = http(&served.addr, "GET", "/api/v1/unmask/1", "").unwrap();
    assert_eq!(status, 403);
    let logs = served.terminate();
    assert!(!logs.contains(&key_hex[..16]), "{logs}");

    let garbage = dir.file("garbage.key", "not a key but a secret sentence\n");
    let stderr = stderr_of(&["serve", "--mask-key-file", garbage.to_str().unwrap()], 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("secret sentence"), "{stderr}");
}

//! The `snowflake` binary end to end: output, exit codes, pipes.

use assert_cmd::Command;
use predicates::prelude::*;
use snowflake::MarkStore;
use support::http;
use support::served::Served;

mod support;

fn snowflake() -> Command {
    let mut cmd = Command::cargo_bin("snowflake").unwrap();
    cmd.env_remove("SNOWFLAKE_LAYOUT")
        .env_remove("SNOWFLAKE_EPOCH")
        .env_remove("SNOWFLAKE_TICK_MS")
        .env_remove("SNOWFLAKE_STATE_FILE");
    cmd
}

fn stdout_of(args: &[&str]) -> String {
    let out = snowflake()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn compose_worked_example_prints_the_id_first_then_its_bits() {
    let out = stdout_of(&[
        "compose",
        "--timestamp",
        "1288834975657",
        "--datacenter",
        "1",
        "--machine",
        "1",
        "--sequence",
        "0",
    ]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("4194439168"));
    assert_eq!(
        lines.next(),
        Some("0 00000000000000000000000000000001111101000 00001 00001 000000000000")
    );
    assert!(out.contains("2010-11-04T01:42:55.657Z"));
    assert!(out.contains("0xfa021000"));
    // Piped, so no colour codes.
    assert!(!out.contains('\x1b'));
}

#[test]
fn compose_json_is_the_documented_shape() {
    let out = stdout_of(&[
        "compose",
        "-t",
        "1288834975657",
        "-f",
        "datacenter=1",
        "-f",
        "machine=1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["id"], "4194439168");
    assert_eq!(v["layout"], "twitter");
    assert_eq!(v["timestamp_ms"], 1288834975657i64);
    assert_eq!(v["time"], "2010-11-04T01:42:55.657Z");
    assert_eq!(
        v["fields"],
        serde_json::json!({"datacenter":1,"machine":1,"sequence":0})
    );
    assert_eq!(v["segments"][1]["value"], 1000);
    assert_eq!(out.lines().count(), 1);
}

#[test]
fn compose_without_timestamp_uses_now() {
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let out = stdout_of(&["compose", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ts = v["timestamp_ms"].as_i64().unwrap();
    assert!(ts >= before && ts < before + 60_000, "{ts} vs {before}");
}

#[test]
fn compose_any_layout_by_field_name() {
    let out = stdout_of(&[
        "compose",
        "--layout",
        "discord",
        "-t",
        "1462015105796",
        "-f",
        "worker=1",
        "-f",
        "process=0",
        "-f",
        "increment=7",
    ]);
    assert_eq!(out.lines().next(), Some("175928847299117063"));
    let out = stdout_of(&[
        "compose",
        "--layout",
        "time:29,worker:21,sequence:13",
        "--tick-ms",
        "1000",
        "--epoch",
        "1474300800000",
        "-t",
        "1474300805000",
        "-f",
        "worker=2",
        "-f",
        "sequence=1",
    ]);
    assert_eq!(
        out.lines().next().unwrap(),
        ((5u64 << 34) | (2 << 13) | 1).to_string()
    );
}

#[test]
fn decode_published_ids() {
    let out = stdout_of(&["decode", "1541815603606036480", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["time"], "2022-06-28T16:07:40.105Z");
    assert_eq!(
        v["fields"],
        serde_json::json!({"datacenter":11,"machine":26,"sequence":0})
    );
    let out = stdout_of(&[
        "decode",
        "--layout",
        "discord",
        "175928847299117063",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["timestamp_ms"], 1462015105796i64);
    assert_eq!(
        v["fields"],
        serde_json::json!({"worker":1,"process":0,"increment":7})
    );
}

#[test]
fn decode_many_ids_hex_too_one_json_object_per_line() {
    let out = stdout_of(&["decode", "4194439168", "0xfa021000", "--json"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1]);
}

#[test]
fn bounds_from_dates_and_ms() {
    let out = stdout_of(&[
        "bounds",
        "--from",
        "2010-11-04T01:42:55.657Z",
        "--to",
        "1288834975657",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["first"], (1000u64 << 22).to_string());
    assert_eq!(v["last"], ((1000u64 << 22) | ((1 << 22) - 1)).to_string());
    let text = stdout_of(&[
        "bounds",
        "--from",
        "2024-01-01T00:00:00Z",
        "--to",
        "2024-01-02T00:00:00Z",
    ]);
    assert!(text.contains("WHERE id BETWEEN "));
}

#[test]
fn layouts_table_and_json() {
    let table = stdout_of(&["layouts", "--now", "2025-01-01T00:00:00Z"]);
    for name in [
        "twitter",
        "discord",
        "instagram",
        "sonyflake",
        "mastodon",
        "js53",
    ] {
        assert!(table.contains(name), "{table}");
    }
    assert!(table.contains("2080-07-10T17:30:30.208Z (70 years)"));
    let js53 = table.lines().find(|l| l.starts_with("js53 ")).unwrap();
    let cells: Vec<&str> = js53
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        [
            "js53",
            "unused:11,time:41,worker:6,sequence:6",
            "2024-01-01T00:00:00.000Z",
            "2093-09-06T15:47:35.551Z (70 years)",
            "68.7 years",
            "64",
            "64",
            "sequence",
            "53",
            "yes"
        ]
    );
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .ends_with("JS-safe (under 2^53)")
    );
    let v: serde_json::Value = serde_json::from_str(&stdout_of(&["layouts", "--json"])).unwrap();
    assert_eq!(v[0]["nodes"], 1024);
    assert_eq!(v[0]["ids_per_ms"], 4096.0);
    assert_eq!(v[3]["tick_ms"], 10);
    let safe: Vec<bool> = (0..6).map(|i| v[i]["js_safe"].as_bool().unwrap()).collect();
    assert_eq!(safe, [false, false, false, false, false, true]);
    assert_eq!(v[5]["bits"], 53);
    assert_eq!(v[5]["max_id"], "9007199254740991");
    assert_eq!(v[0]["max_id"], "9223372036854775807");
}

#[test]
fn a_53_bit_layout_composes_decodes_and_generates_numbers_javascript_holds() {
    let out = stdout_of(&[
        "compose",
        "--layout",
        "js53",
        "-t",
        "2024-01-01T00:00:01Z",
        "-f",
        "worker=3",
        "-f",
        "sequence=5",
    ]);
    let id: u64 = out.lines().next().unwrap().parse().unwrap();
    assert_eq!(id, (1000 << 12) | (3 << 6) | 5);
    assert!(
        out.lines().nth(1).unwrap().starts_with("00000000000 "),
        "{out}"
    );
    let generated = stdout_of(&[
        "generate",
        "--layout",
        "js53",
        "-n",
        "500",
        "-f",
        "worker=63",
    ]);
    for line in generated.lines() {
        let id: u64 = line.parse().unwrap();
        assert!(id < (1 << 53), "{id}");
        assert_eq!((id >> 6) & 63, 63);
    }
    let assert = snowflake()
        .args(["decode", "--layout", "js53", "9007199254740992"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(
        stderr
            .contains("uses only 53 bits and keeps the rest 0; its IDs are 0 to 9007199254740991"),
        "{stderr}"
    );
}

/// Every kind of bad input: one line on stderr, status 2, nothing on stdout.
#[test]
fn bad_input_exits_2_with_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["compose", "--machine", "32"],
            "machine 32 is out of range: 0 to 31 (5 bits)",
        ),
        (
            &["compose", "--machine", "-1"],
            "machine -1 is out of range: 0 to 31 (5 bits)",
        ),
        (
            &["compose", "--datacenter", "abc"],
            "datacenter \"abc\" is not a whole number",
        ),
        (
            &["compose", "--sequence", "4096"],
            "sequence 4096 is out of range: 0 to 4095 (12 bits)",
        ),
        (
            &["compose", "-f", "worker=1"],
            "no field \"worker\"; its fields are datacenter, machine, sequence",
        ),
        (
            &["compose", "-t", "1288834974656"],
            "is before the layout's epoch",
        ),
        (
            &["compose", "-t", "3487858230209"],
            "after the last time the layout can encode, 3487858230208 (2080-07-10T17:30:30.208Z)",
        ),
        (
            &["compose", "-t", "yesterday"],
            "timestamp \"yesterday\" is not a time",
        ),
        (
            &["compose", "--layout", "flickr"],
            "unknown layout \"flickr\"",
        ),
        (
            &["compose", "--layout", "time:41,machine:25"],
            "add up to 66 bits; an ID holds at most 64",
        ),
        (&["compose", "--tick-ms", "0"], "tick_ms 0 is not allowed"),
        (
            &["decode", "18446744073709551616"],
            "does not fit in 64 bits",
        ),
        (
            &["decode", "12ab"],
            "id \"12ab\" is not decimal: 'a' is not allowed",
        ),
        (
            &["decode", "--format", "base64", "1"],
            "format base64 is not allowed; a text form is decimal, hex, base32, base62 or base58",
        ),
        (
            &["decode", "--format", "base62", "000000000000"],
            "id \"000000000000\" is not base62: it is 12 characters long",
        ),
        (
            &["decode", "-", "1"],
            "- reads IDs from stdin and comes alone",
        ),
        (&["decode", "-5"], "id \"-5\" is negative"),
        (
            &["decode", "1", "9223372036854775808"],
            "has the sign bit set",
        ),
        (
            &[
                "bounds",
                "--from",
                "2024-01-02T00:00:00Z",
                "--to",
                "2024-01-01T00:00:00Z",
            ],
            "is after to",
        ),
        (
            &["generate", "-n", "many"],
            "invalid value 'many' for '--count <COUNT>': a count is a whole number, 0 or more",
        ),
        // Echoed input cannot drive the terminal: control characters are
        // shown escaped.
        (
            &["generate", "-n", "\u{1b}[31mRED"],
            "for '--count <COUNT>'",
        ),
        (
            &["compose", "-f", "machine=\u{1b}[31m7"],
            "is not a whole number",
        ),
        (
            &["generate", "--machine", "99"],
            "machine 99 is out of range",
        ),
        (
            &["generate", "--layout", "time:41,node:22"],
            "has no sequence field",
        ),
    ];
    for (args, message) in cases {
        let assert = snowflake().args(*args).assert().code(2).stdout("");
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains('\u{1b}'),
            "{args:?}: a raw escape in {stderr:?}"
        );
    }
    // clap's own usage errors are status 2 as well, and one line too.
    for args in [
        &["compose", "--bogus"][..],
        &["decode", "--json", "--csv", "1"][..],
        &["bounds", "--from", "1"][..],
        &["serve", "--log-format", "xml"][..],
    ] {
        let assert = snowflake().args(args).assert().code(2).stdout("");
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let assert = snowflake()
        .args(["serve", "--log-format", "xml"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("text, json"), "{stderr}");
}

#[test]
fn generate_streams_unique_increasing_ids() {
    let out = stdout_of(&[
        "generate",
        "-n",
        "20000",
        "--datacenter",
        "2",
        "--machine",
        "3",
    ]);
    let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 20000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let twitter = snowflake::Layout::twitter();
    let d = twitter.decode(snowflake::Id::new(ids[0])).unwrap();
    assert_eq!(
        (d.field("datacenter"), d.field("machine")),
        (Some(2), Some(3))
    );
}

#[test]
fn generate_json_lines() {
    let out = stdout_of(&[
        "generate", "-n", "3", "--json", "--layout", "discord", "-f", "worker=4",
    ]);
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["fields"]["worker"], 4);
    }
    assert_eq!(out.lines().count(), 3);
}

#[test]
fn generate_into_a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command as Std, Stdio};
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("snowflake"))
        .args(["generate", "-n", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for _ in 0..3 {
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(line.trim().parse::<u64>().is_ok());
    }
    drop(reader);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Only the state file can make this pass: the mark is raised ahead of the
/// clock between the runs, so a rerun that ignored the file would issue IDs
/// below it, and a mark beyond what a restart waits out stops the rerun.
#[test]
fn generate_with_a_state_file_never_repeats_across_runs() {
    use snowflake::{Clock, FileMarkStore, Layout, SystemClock};
    let dir = std::env::temp_dir().join(format!("snowflake-cli-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mark");
    let state = path.to_str().unwrap();
    let twitter = Layout::twitter();
    let first = stdout_of(&["generate", "-n", "5000", "--state-file", state]);
    let last_of_first: u64 = first.lines().last().unwrap().parse().unwrap();
    let last = twitter.decode(snowflake::Id::new(last_of_first)).unwrap();
    // A clean end leaves the mark at the last ID issued.
    assert_eq!(
        FileMarkStore::new(&path).load().unwrap(),
        Some(last.timestamp_ms())
    );

    // As if the first run had issued up to 900 ms ahead of the clock.
    let ahead = SystemClock.now_ms() + 900;
    let store = FileMarkStore::new(&path);
    store.open(&twitter).unwrap();
    store.save(ahead).unwrap();
    drop(store);
    let second = stdout_of(&["generate", "-n", "5000", "--state-file", state]);
    let first_of_second: u64 = second.lines().next().unwrap().parse().unwrap();
    let d = twitter.decode(snowflake::Id::new(first_of_second)).unwrap();
    assert!(
        d.timestamp_ms() > ahead,
        "the rerun issued at {}, at or below the mark {ahead}",
        d.timestamp_ms()
    );
    assert!(first_of_second > last_of_first);

    // A mark a minute ahead is more than a restart waits out: refused.
    let store = FileMarkStore::new(&path);
    store.open(&twitter).unwrap();
    store.save(SystemClock.now_ms() + 60_000).unwrap();
    drop(store);
    snowflake()
        .args(["generate", "--state-file", state])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("behind the high-water mark"));

    std::fs::write(state, "garbage").unwrap();
    snowflake()
        .args(["generate", "--state-file", state])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "cannot use {state}: it is not a mark file"
        )));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `snowflake serve` on a real socket: it answers, and on SIGTERM it
/// finishes, exits 0 and leaves the state file at the last ID it issued.
#[test]
fn serve_answers_and_shuts_down_gracefully_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("snowflake-cli-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("mark");
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("snowflake"));
    command
        .args(["serve", "--machine", "9", "--log-format", "json"])
        .env("SNOWFLAKE_LISTEN", "127.0.0.1:0")
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
    let second = snowflake()
        .args(["serve", "--machine", "9", "--listen", "127.0.0.1:0"])
        .env("SNOWFLAKE_STATE_FILE", &state)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(1);
    let refusal = String::from_utf8_lossy(&second.get_output().stderr).to_string();
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
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each request is logged (tower-http's "started" and "finished" lines) when
/// the log level asks for them, and not at the default level.
#[test]
fn serve_traces_requests_only_when_the_log_level_asks() {
    for (filter, traced) in [("info", false), ("info,tower_http=debug", true)] {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("snowflake"));
        command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("RUST_LOG", filter)
            .env("NO_COLOR", "1")
            .env_remove("SNOWFLAKE_STATE_FILE");
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
        let assert = snowflake().args(args).assert().code(2).stdout("");
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
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
        let assert = snowflake()
            .args(args)
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stdout("");
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("cargo build --release -p snowflake-cli --features cluster"),
            "{args:?}: {stderr}"
        );
    }
}

fn state_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snowflake-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two processes on one state file: the second starts while the first is
/// issuing, and refuses with one line naming the file and the first's PID.
#[test]
fn a_second_generate_on_the_same_state_file_is_refused() {
    use std::collections::HashSet;
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command as Std, Stdio};
    let dir = state_dir("lock");
    let state = dir.join("mark");
    let state = state.to_str().unwrap();
    let args = [
        "generate",
        "-n",
        "2000000",
        "--machine",
        "7",
        "--state-file",
        state,
    ];
    let mut first = Std::new(assert_cmd::cargo::cargo_bin("snowflake"))
        .args(args)
        .env_remove("SNOWFLAKE_STATE_FILE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(first.stdout.take().unwrap());
    let mut ids = String::new();
    // Its first ID is out, so it holds the lock; it cannot finish before we
    // read the rest, as the pipe fills long before two million IDs.
    out.read_line(&mut ids).unwrap();
    assert!(!ids.is_empty(), "the first run printed nothing");

    let second = snowflake()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    out.read_to_string(&mut ids).unwrap();
    let mut first_err = String::new();
    first
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut first_err)
        .unwrap();
    let status = first.wait().unwrap();
    assert!(status.success(), "{status:?}: {first_err}");

    let refusal = String::from_utf8(second.stderr).unwrap();
    assert_eq!(second.status.code(), Some(1), "{refusal}");
    assert_eq!(refusal.lines().count(), 1, "{refusal}");
    assert!(
        refusal.contains(&format!(
            "{state} is in use by process {}, which holds the lock on {state}.lock",
            first.id()
        )),
        "{refusal}"
    );
    let second_ids = String::from_utf8(second.stdout).unwrap();
    assert_eq!(second_ids, "");

    let mut seen = HashSet::new();
    let mut count = 0;
    for line in ids.lines().chain(second_ids.lines()) {
        let id: u64 = line.parse().unwrap();
        assert!(seen.insert(id), "{id} was issued twice");
        count += 1;
    }
    assert_eq!(count, 2_000_000);
    // The first run let go: the file is usable again.
    stdout_of(&["generate", "-n", "1", "--state-file", state]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Links and pipes planted at the state file's paths are refused with a
/// clear line, and nothing they point at is written.
#[test]
fn a_planted_link_or_fifo_at_the_state_file_is_refused() {
    use std::os::unix::fs::symlink;
    let dir = state_dir("planted");
    let target = dir.join("precious");
    std::fs::write(&target, "keep me\n").unwrap();
    let state = dir.join("mark");
    let lock = dir.join("mark.lock");
    let refused = |what: &str, at: &std::path::Path| {
        let assert = snowflake()
            .args(["generate", "-n", "10", "--state-file"])
            .arg(&state)
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(1)
            .stdout("");
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!("refusing to use {}: it is {what}", at.display())),
            "{stderr}"
        );
    };

    symlink(&target, &state).unwrap();
    refused("a symbolic link", &state);
    assert!(
        !lock.exists(),
        "a lock file was made for a refused state file"
    );
    std::fs::remove_file(&state).unwrap();

    symlink(&target, &lock).unwrap();
    refused("a symbolic link", &lock);
    std::fs::remove_file(&lock).unwrap();

    let made = std::process::Command::new("mkfifo").arg(&state).status();
    assert!(made.is_ok_and(|s| s.success()), "this test needs mkfifo");
    refused("a FIFO (named pipe)", &state);
    std::fs::remove_file(&state).unwrap();

    // A link at the temporary name earlier builds used is left alone.
    symlink(&target, dir.join("mark.tmp")).unwrap();
    stdout_of(&[
        "generate",
        "-n",
        "10",
        "--state-file",
        state.to_str().unwrap(),
    ]);
    assert!(
        snowflake::FileMarkStore::new(&state)
            .load()
            .unwrap()
            .is_some()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `snowflake page` writes the page as one file: the same document the
/// service sends, with everything inline and a policy that allows nothing
/// from elsewhere (the browser tests open it from disk).
#[test]
fn page_prints_one_self_contained_document() {
    let out = snowflake().arg("page").assert().success();
    let html = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        html.starts_with("<!doctype html>"),
        "{}",
        &html[..80.min(html.len())]
    );
    assert!(html.contains("Content-Security-Policy"));
    assert!(html.contains(snowflake_server::content_security_policy()));
    assert!(!html.contains(" src=\"http") && !html.contains(" href=\"http"));
}

#[test]
fn text_forms_round_trip_through_compose_decode_and_generate() {
    let base62 = stdout_of(&[
        "compose",
        "-t",
        "1288834975657",
        "--machine",
        "1",
        "--datacenter",
        "1",
        "--format",
        "base62",
    ]);
    let first = base62.lines().next().unwrap();
    assert_eq!(
        first,
        snowflake::Id::new(4194439168).to_text(snowflake::TextForm::Base62)
    );
    let decoded = stdout_of(&["decode", "--format", "base62", first, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&decoded).unwrap();
    assert_eq!(v["id"], "4194439168");
    assert_eq!(v["text"]["base62"], first);
    // Crockford's aliases and lower case read as the canonical form.
    let canonical = v["text"]["base32"].as_str().unwrap().to_string();
    let sloppy = canonical.to_lowercase().replace('0', "o");
    let again = stdout_of(&["decode", "--format", "base32", &sloppy, "--json"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&again).unwrap()["id"],
        "4194439168"
    );

    let out = stdout_of(&["generate", "-n", "2000", "--format", "base32"]);
    let ids: Vec<&str> = out.lines().collect();
    assert_eq!(ids.len(), 2000);
    assert!(ids.iter().all(|id| id.len() == 13), "{out}");
    // Fixed width: the text sorts as the IDs were issued.
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_stream_goes_on_past_bad_lines_and_ends_with_status_2() {
    let input = "1541815603606036480 12ab\n\n0xfa021000\n9223372036854775808\n";
    let assert = snowflake()
        .args(["decode", "--csv", "-"])
        .write_stdin(input)
        .assert()
        .code(2);
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "line,id,timestamp_ms,time,datacenter,machine,sequence,error"
    );
    assert_eq!(
        lines[1],
        "1,1541815603606036480,1656432460105,2022-06-28T16:07:40.105Z,11,26,0,"
    );
    assert!(
        lines[2].starts_with("1,12ab,,,,,,\"id \"\"12ab\"\" is not decimal"),
        "{out}"
    );
    assert_eq!(
        lines[3],
        "3,4194439168,1288834975657,2010-11-04T01:42:55.657Z,1,1,0,"
    );
    assert!(
        lines[4].starts_with(
            "4,9223372036854775808,,,,,,\"id 9223372036854775808 has the sign bit set"
        ),
        "{out}"
    );
    assert_eq!(lines.len(), 5);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert_eq!(
        stderr,
        "error: 2 of the IDs read could not be decoded; see their error records\n"
    );

    // NDJSON: one record per ID, the bad ones as error records.
    let assert = snowflake()
        .args(["decode", "--json", "-"])
        .write_stdin(input)
        .assert()
        .code(2);
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["fields"]["machine"], 26);
    assert_eq!(records[1]["line"], 1);
    assert_eq!(records[1]["input"], "12ab");
    assert_eq!(records[1]["field"], "id");
    assert_eq!(records[3]["line"], 4);

    // Text: breakdowns on stdout, one stderr line per bad line, numbered.
    let assert = snowflake()
        .args(["decode"])
        .write_stdin(input)
        .assert()
        .code(2);
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(out.starts_with("1541815603606036480\n"), "{out}");
    assert!(out.contains("\n\n4194439168\n"), "{out}");
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].starts_with("line 1: id \"12ab\" is not decimal"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("line 4: id 9223372036854775808 has the sign bit set"),
        "{stderr}"
    );
    assert_eq!(
        lines[2],
        "error: 2 of the IDs read could not be decoded; see the lines above"
    );
}

#[test]
fn a_clean_stream_exits_0_and_reads_the_named_form() {
    let ids: Vec<String> = (0..1000u64)
        .map(|i| snowflake::Id::new(4194439168 + (i << 22)).to_text(snowflake::TextForm::Base58))
        .collect();
    let input = ids.join(" ");
    let assert = snowflake()
        .args(["decode", "--csv", "--format", "base58"])
        .write_stdin(input)
        .assert()
        .success()
        .stderr("");
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 1000);
    for (i, (row, id)) in rows.iter().zip(&ids).enumerate() {
        let expected = format!("1,{id},{},", 1288834975657 + i as i64);
        assert!(row.starts_with(&expected), "{row} vs {expected}");
    }
    // Empty input: a header and nothing else.
    snowflake()
        .args(["decode", "--csv", "-"])
        .write_stdin("")
        .assert()
        .success()
        .stdout("line,id,timestamp_ms,time,datacenter,machine,sequence,error\n");
}

/// Bad input that a spreadsheet would evaluate comes out of `decode --csv`
/// as text, and still makes the exit status 2.
#[test]
fn csv_output_neutralises_formulas() {
    let out = snowflake()
        .args(["decode", "--csv", "-"])
        .write_stdin("=1+1 @SUM(A1) +2 -3 4194439168\n")
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|row| row.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "\"'=1+1\"",
            "\"'@SUM(A1)\"",
            "\"'+2\"",
            "\"'-3\"",
            "4194439168"
        ],
        "{text}"
    );
}

#[test]
fn layout_all_reads_an_id_under_every_preset() {
    let out = stdout_of(&["decode", "--layout", "all", "175928847299117063"]);
    let mut lines = out.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("175928847299117063 under every preset, judged at ")
    );
    assert!(lines.next().unwrap().starts_with("layout "));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 6, "{out}");
    assert!(
        rows[1].starts_with("discord    Discord (since 2015-01-01)"),
        "{out}"
    );
    assert!(
        rows[1].contains("2016-04-30T11:18:25.796Z  possible"),
        "{out}"
    );
    // Mastodon's milliseconds put it in 2055: the future, for decades yet.
    assert!(
        rows[4].contains("implausible  its time, 2055-01-25T03:39:30.946Z, is in the future"),
        "{out}"
    );
    assert!(
        rows[5].contains("impossible   id 175928847299117063 has bits set above its lowest 53"),
        "{out}"
    );

    let json = stdout_of(&["decode", "--layout", "all", "--json", "1", "2"]);
    let docs: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[1]["id"], "2");
    assert_eq!(docs[0]["readings"][0]["layout"], "twitter");
    // Twitter's epoch plus 1 ms is 2010-11-04: after its launch day began.
    assert_eq!(docs[0]["readings"][0]["verdict"], "possible");

    for (args, message) in [
        (
            &["decode", "--layout", "all", "--epoch", "0", "1"][..],
            "leave out the epoch and the tick",
        ),
        (
            &["decode", "--layout", "all", "-"][..],
            "all reads IDs given as arguments",
        ),
        (&["decode", "--layout", "all", "--csv", "1"][..], "not CSV"),
    ] {
        let assert = snowflake()
            .args(args)
            .write_stdin("1\n")
            .assert()
            .code(2)
            .stdout("");
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

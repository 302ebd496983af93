//! `snowflake serve` as a real process on a real socket: answers, SIGTERM,
//! request logs, bad settings, cluster mode without its feature, the node
//! it issues as and where it refuses to start without one.

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
    let mark = snowflake_store::FileMarkStore::new(&state).load().unwrap();
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

/// Arguments after `serve`, and variables set for it.
type Args<'a> = &'a [&'a str];
type Env<'a> = &'a [(&'a str, &'a str)];

/// The decoded node of the first ID `served` hands out: (datacenter, machine).
fn node_of(addr: &str) -> (Option<u64>, Option<u64>) {
    let (status, body) = http(addr, "POST", "/api/v1/ids?count=1", "").unwrap();
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id: snowflake::Id = v["ids"][0].as_str().unwrap().parse().unwrap();
    let twitter = snowflake::Layout::twitter();
    let d = twitter.decode(id).unwrap();
    (d.field("datacenter"), d.field("machine"))
}

/// At start-up the service says which node it issues as, field by field,
/// and where each value came from: a flag, a variable, or the default. The
/// README's first command (`serve`, on loopback, no flags) still serves, as
/// node 0, with a warning that says so.
#[test]
fn serve_says_which_node_it_issues_as_and_where_that_came_from() {
    let cases: [(Args, Env, (u64, u64), &str); 5] = [
        (
            &["--machine", "7"],
            &[("SNOWFLAKE_DATACENTER", "3")],
            (3, 7),
            "issuing as datacenter 3 (from SNOWFLAKE_DATACENTER), machine 7 (from --machine)",
        ),
        (
            &["-f", "machine=2"],
            &[],
            (0, 2),
            "issuing as datacenter 0 (by default), machine 2 (from --field)",
        ),
        (
            &[],
            &[("SNOWFLAKE_FIELDS", "datacenter=4,machine=5")],
            (4, 5),
            "issuing as datacenter 4 (from SNOWFLAKE_FIELDS), machine 5 (from SNOWFLAKE_FIELDS)",
        ),
        (
            &["--datacenter", "1"],
            &[("SNOWFLAKE_DATACENTER", "9")],
            (1, 0),
            "issuing as datacenter 1 (from --datacenter), machine 0 (by default)",
        ),
        (
            &[],
            &[],
            (0, 0),
            "issuing as datacenter 0 (by default), machine 0 (by default): no node was given",
        ),
    ];
    for (args, env, (datacenter, machine), line) in cases {
        let mut command = Served::command();
        command
            .args(args)
            .envs(env.iter().copied())
            .env("NO_COLOR", "1");
        let served = Served::start(command);
        assert_eq!(
            node_of(&served.addr),
            (Some(datacenter), Some(machine)),
            "{args:?} {env:?}"
        );
        let logs = served.terminate();
        let said = logs
            .lines()
            .find(|l| l.contains("issuing "))
            .unwrap_or_else(|| panic!("{args:?} {env:?}: no line says the node:\n{logs}"));
        assert!(said.contains(line), "{args:?} {env:?}:\n{logs}");
        // A warning when the node is only the default, else information.
        let defaulted = args.is_empty() && env.is_empty();
        assert_eq!(said.contains("WARN"), defaulted, "{said}");
        assert_eq!(said.contains("INFO"), !defaulted, "{said}");
        // Said before the service listens, so that it is in any log that
        // shows the service ever ran.
        assert!(
            logs.find("issuing ").unwrap() < logs.find("listening on").unwrap(),
            "{logs}"
        );
    }
}

/// A service that others can reach (any address but loopback), or one
/// told to require a node (as the container image does) will not start
/// without one: status 2 before it listens, one line saying how to give
/// one. A node value given, even 0, or cluster mode is a node.
#[test]
fn a_replica_without_a_node_refuses_to_start() {
    let twitter_how = "give it a node of its own with --datacenter N --machine N (or \
                       SNOWFLAKE_DATACENTER=N SNOWFLAKE_MACHINE=N in the environment";
    let cases: [(Args, Env, &[&str]); 5] = [
        (
            &["--listen", "0.0.0.0:0"],
            &[],
            &[
                "serve listens on 0.0.0.0:0, where other machines can reach it, but was given no \
                 node: it would issue as datacenter 0, machine 0",
                twitter_how,
                "--etcd URL (SNOWFLAKE_ETCD)",
            ],
        ),
        (
            &[],
            &[("SNOWFLAKE_LISTEN", "[::]:0")],
            &["serve listens on [::]:0", twitter_how],
        ),
        (
            &[],
            &[
                ("SNOWFLAKE_REQUIRE_NODE", "true"),
                ("SNOWFLAKE_LISTEN", "127.0.0.1:0"),
            ],
            &[
                "serve was given no node, and --require-node (SNOWFLAKE_REQUIRE_NODE, which the \
                 container image sets) asks for one",
                twitter_how,
            ],
        ),
        (
            &[
                "--require-node",
                "--listen",
                "[::1]:0",
                "--layout",
                "discord",
            ],
            &[],
            &["-f worker=N -f process=N (or SNOWFLAKE_FIELDS=worker=N,process=N"],
        ),
        (
            &["--listen", "0.0.0.0:0", "--layout", "time:41,sequence:22"],
            &[],
            &["its layout has no node field", "cluster mode (--etcd URL"],
        ),
    ];
    for (args, env, said) in cases {
        let stderr = snowflake()
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .timeout(Duration::from_secs(20))
            .assert()
            .code(2)
            .stdout("")
            .stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{args:?} {env:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        for words in said {
            assert!(stderr.contains(words), "{args:?} {env:?}: {stderr}");
        }
    }
    // Given a node, even 0, each starts: beyond loopback, and required.
    // (Each case above binds port 0 too, so that a broken refusal takes no
    // port another process may want.)
    for (args, env) in [
        (&["--listen", "0.0.0.0:0", "--machine", "0"][..], &[][..]),
        (
            &[][..],
            &[
                ("SNOWFLAKE_REQUIRE_NODE", "true"),
                ("SNOWFLAKE_MACHINE", "0"),
            ][..],
        ),
        (&["--require-node", "-f", "datacenter=0"][..], &[][..]),
    ] {
        let mut command = Served::command();
        command.args(args).envs(env.iter().copied());
        let served = Served::start(command);
        let port = served.addr.rsplit(':').next().unwrap().to_string();
        assert_eq!(
            node_of(&format!("127.0.0.1:{port}")),
            (Some(0), Some(0)),
            "{args:?} {env:?}"
        );
        served.terminate();
    }
}

/// In cluster mode the node comes from a slot leased on etcd, so a
/// service beyond loopback with no node values starts, and says so; the
/// etcd here is one nobody runs, since only the start-up line is read.
#[cfg(feature = "cluster")]
#[test]
fn a_cluster_node_issues_from_its_slot() {
    let etcd = format!("http://127.0.0.1:{}", crate::support::free_port());
    let mut command = Served::command();
    command
        .args([
            "--listen",
            "0.0.0.0:0",
            "--datacenter",
            "2",
            "--etcd",
            &etcd,
        ])
        .env("SNOWFLAKE_REQUIRE_NODE", "true")
        .env("NO_COLOR", "1");
    let served = Served::start(command);
    // Alive (not ready: it holds no slot), so SIGTERM finds its handler.
    assert_eq!(
        http(
            &served.addr.replace("0.0.0.0", "127.0.0.1"),
            "GET",
            "/healthz",
            ""
        )
        .unwrap()
        .0,
        200
    );
    let logs = served.terminate();
    assert!(
        logs.contains(
            "issuing from a slot leased on etcd: datacenter 2 (from --datacenter), machine from \
             the slot"
        ),
        "{logs}"
    );
}

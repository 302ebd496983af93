//! The `snowflake` command with none of the settings the environment might
//! carry, dumps of IDs with faults planted at known counts, and a
//! `snowflake serve` on a port it picks itself.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use snowflake::Layout;

/// The binary, with the layout, epoch, tick, state file and listen address
/// of the environment removed, so that a developer's shell cannot change a
/// test.
pub fn snowflake() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("snowflake").unwrap();
    for var in [
        "SNOWFLAKE_LAYOUT",
        "SNOWFLAKE_EPOCH",
        "SNOWFLAKE_TICK_MS",
        "SNOWFLAKE_STATE_FILE",
        "SNOWFLAKE_LISTEN",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// What a successful run printed; the run must exit 0.
pub fn stdout_of(args: &[&str]) -> String {
    let out = snowflake()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// 2025-01-01T00:00:00Z: the "now" of the audits.
pub const NOW: i64 = 1735689600000;

/// A dump of Twitter IDs with faults planted at counts the tests know. It
/// is built as an incident would leave it: in the order the IDs were
/// stored, one per line.
#[derive(Debug)]
pub struct Dump {
    pub lines: Vec<String>,
}

/// What the planted dump holds, counted by hand from [`planted`].
#[derive(Debug)]
pub struct Planted {
    pub ids: u64,
    pub distinct: u64,
    pub duplicated_values: u64,
    pub not_increasing: u64,
    pub future: u64,
    pub saturated_units: u64,
    /// The line numbers of the two tokens that are not IDs.
    pub bad_lines: [u64; 2],
    /// (datacenter, machine, ids, not increasing, saturated units), by node.
    pub nodes: [(u64, u64, u64, u64, u64); 4],
}

fn twitter(ms: i64, datacenter: u64, machine: u64, sequence: u64) -> String {
    Layout::twitter()
        .compose(
            ms,
            &[
                ("datacenter", datacenter),
                ("machine", machine),
                ("sequence", sequence),
            ],
        )
        .unwrap()
        .to_string()
}

/// Four nodes an hour before [`NOW`]:
/// - A (1/1): 200 IDs a millisecond apart, clean; then a millisecond in
///   which it issued all 4,096 sequence numbers (1 saturated unit); at the
///   very end, 3 of its first IDs copied again (3 duplicated values; only
///   the first copy is below A's previous ID: 1 not increasing).
/// - B (1/2): 100 IDs, then its clock set back 60 ms and 50 more from there
///   (sequence 1, so no copies): 1 not increasing.
/// - C (2/3): two processes as one node, the second's clock 5 ms behind,
///   their 20 IDs each stored alternately: each of the second's is below
///   the first's before it (20 not increasing), and 15 of them equal one
///   of the first's (t+5..t+19 with sequence 0): 15 duplicated values.
/// - D (3/4): one ID 30 s ahead (within the minute's slack) and two a day
///   and two days ahead (2 from the future).
///
/// Two tokens that are not IDs sit between D and A's copies.
pub fn planted() -> (Dump, Planted) {
    let t = NOW - 3_600_000;
    let mut lines = Vec::new();
    for i in 0..200 {
        lines.push(twitter(t + i, 1, 1, 0));
    }
    for i in 0..100 {
        lines.push(twitter(t + i, 1, 2, 0));
    }
    for j in 0..50 {
        lines.push(twitter(t + 99 - 60 + j, 1, 2, 1));
    }
    for i in 0..20 {
        lines.push(twitter(t + i, 2, 3, 0));
        lines.push(twitter(t + i - 5, 2, 3, 0));
    }
    for seq in 0..4096 {
        lines.push(twitter(t + 500, 1, 1, seq));
    }
    lines.push(twitter(NOW + 30_000, 3, 4, 0));
    lines.push(twitter(NOW + 86_400_000, 3, 4, 0));
    lines.push(twitter(NOW + 2 * 86_400_000, 3, 4, 0));
    lines.push("garbage".to_string());
    lines.push("9223372036854775808".to_string()); // the sign bit set
    for i in [10, 20, 30] {
        lines.push(twitter(t + i, 1, 1, 0));
    }
    let ids = 200 + 150 + 40 + 4096 + 3 + 3;
    let planted = Planted {
        ids,
        distinct: ids - 3 - 15,
        duplicated_values: 18,
        not_increasing: 1 + 1 + 20,
        future: 2,
        saturated_units: 1,
        bad_lines: [4490, 4491],
        nodes: [
            (1, 1, 200 + 4096 + 3, 1, 1),
            (1, 2, 150, 1, 0),
            (2, 3, 40, 20, 0),
            (3, 4, 3, 0, 0),
        ],
    };
    (Dump { lines }, planted)
}

impl Dump {
    /// The dump as a file's text, one ID a line.
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

/// A `snowflake serve` listening on a port the kernel picked, and where.
pub struct Served {
    pub child: Child,
    pub addr: String,
    /// The rest of its log, read until it ends.
    log: BufReader<ChildStderr>,
}

impl Served {
    /// Starts `snowflake serve` on 127.0.0.1:0 with `args` and reads its
    /// address from its log, for at most 20 s.
    pub fn start(args: &[&str]) -> Served {
        let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("snowflake"))
            .arg("serve")
            .args(args)
            .env("SNOWFLAKE_LISTEN", "127.0.0.1:0")
            .env_remove("SNOWFLAKE_STATE_FILE")
            .env_remove("SNOWFLAKE_LAYOUT")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut log = BufReader::new(child.stderr.take().unwrap());
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut line = String::new();
        let addr = loop {
            assert!(
                Instant::now() < deadline,
                "serve did not say where it listens"
            );
            line.clear();
            assert!(log.read_line(&mut line).unwrap() > 0, "serve ended early");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.split('/').next().unwrap().to_string();
            }
        };
        Served { child, addr, log }
    }

    /// Stops it with SIGTERM; it must exit 0.
    pub fn stop(mut self) {
        let kill = StdCommand::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut self.log, &mut rest);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}\n{rest}");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // A test that failed before stop() leaves no process behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

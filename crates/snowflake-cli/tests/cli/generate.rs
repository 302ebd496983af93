//! `generate` without a state file: unique increasing IDs, JSON lines, a
//! closed pipe.

use std::io::{BufRead, BufReader};

use crate::support::{command, spawn_piped, stdout_of};

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
    let mut child = spawn_piped(command().args(["generate", "-n", "100000000"]));
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

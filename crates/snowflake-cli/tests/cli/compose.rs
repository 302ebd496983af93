//! `compose`: the worked example, its JSON, the clock's now, any layout by
//! field name.

use snowflake::{Clock, SystemClock};

use crate::support::stdout_of;

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
    let before = SystemClock.now_ms();
    let out = stdout_of(&["compose", "--json"]);
    let after = SystemClock.now_ms();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ts = v["timestamp_ms"].as_i64().unwrap();
    assert!((before..=after).contains(&ts), "{before} {ts} {after}");
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

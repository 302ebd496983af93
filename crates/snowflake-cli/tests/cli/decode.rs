//! `decode` of IDs given as arguments: published IDs, several at once, and
//! one ID under every preset (`--layout all`).

use crate::support::{Printed, snowflake, stdout_of};

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
    // Each row's verdict: Mastodon's milliseconds put it in 2055, the
    // future for decades yet; js53 holds 53 bits.
    for (row, said) in [
        (1, "2016-04-30T11:18:25.796Z  possible"),
        (
            4,
            "implausible  its time, 2055-01-25T03:39:30.946Z, is in the future",
        ),
        (
            5,
            "impossible   id 175928847299117063 has bits set above its lowest 53",
        ),
    ] {
        assert!(rows[row].contains(said), "{out}");
    }

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
        let stderr = snowflake()
            .args(args)
            .write_stdin("1\n")
            .assert()
            .code(2)
            .stdout("")
            .stderr_text();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

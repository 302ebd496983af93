//! `audit`: dumps with planted faults, in text and JSON, files and stdin,
//! any text form and layout, and its bad settings.

use serde_json::Value;
use snowflake::{Id, Layout, TextForm};

use crate::support::dump::{NOW, planted};
use crate::support::{Scratch, snowflake, texts_at};

const NOW_FLAG: &str = "2025-01-01T00:00:00Z";

/// The planted dump, read as JSON: every count as planted, the bad tokens
/// as error records naming their lines, exit status 2 at the end.
#[test]
fn json_counts_every_planted_fault() {
    let (dump, planted) = planted();
    let out = snowflake()
        .args(["audit", "--json", "--now", NOW_FLAG])
        .write_stdin(dump.text())
        .assert()
        .code(2);
    let output = out.get_output();
    let v: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(v["now_ms"], NOW);
    assert_eq!(v["ids"], planted.ids);
    assert_eq!(v["distinct"], planted.distinct);
    assert_eq!(v["duplicated_values"], planted.duplicated_values);
    assert_eq!(v["extra_copies"], planted.ids - planted.distinct);
    assert_eq!(v["not_increasing"], planted.not_increasing);
    assert_eq!(v["future"], planted.future);
    assert_eq!(v["saturated_units"], planted.saturated_units);
    assert_eq!(v["before_platform"], 0);
    assert_eq!(v["bad"], 2);
    assert_eq!(v["clean"], false);
    // The duplicated values, smallest first, each with how often it was read.
    let duplicates = v["duplicates"].as_array().unwrap();
    assert_eq!(duplicates.len() as u64, planted.duplicated_values);
    let values: Vec<u64> = duplicates
        .iter()
        .map(|d| d["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    assert!(duplicates.iter().all(|d| d["count"] == 2));
    assert_eq!(
        texts_at(&v["future_ids"], "time"),
        ["2025-01-02T00:00:00.000Z", "2025-01-03T00:00:00.000Z"]
    );
    let nodes: Vec<(u64, u64, u64, u64, u64)> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"]["datacenter"].as_u64().unwrap(),
                n["node"]["machine"].as_u64().unwrap(),
                n["ids"].as_u64().unwrap(),
                n["not_increasing"].as_u64().unwrap(),
                n["saturated_units"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(nodes, planted.nodes);
    // Node A's IDs span its first millisecond to its saturated one.
    assert_eq!(v["nodes"][0]["first"], "2024-12-31T23:00:00.000Z");
    assert_eq!(v["nodes"][0]["last"], "2024-12-31T23:00:00.500Z");
    let errors = v["errors"].as_array().unwrap();
    let lines: Vec<u64> = errors.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, planted.bad_lines);
    assert_eq!(errors[0]["input"], "garbage");
    assert_eq!(errors[1]["field"], "id");
    assert!(
        errors[1]["error"]
            .as_str()
            .unwrap()
            .contains("has the sign bit set")
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(lines[0].starts_with("line 4490: id \"garbage\" is not decimal"));
    assert!(lines[1].starts_with("line 4491: id 9223372036854775808 has the sign bit set"));
    assert_eq!(
        lines[2],
        "error: 2 of the tokens read are not IDs of layout twitter; see the lines above"
    );
}

/// The same dump as text: the counts, the duplicated values, the future
/// IDs, a row per node, and what to look at.
#[test]
fn text_report_reads_at_three_in_the_morning() {
    let (dump, planted) = planted();
    let out = snowflake()
        .args(["audit", "--now", NOW_FLAG, "--list", "2"])
        .write_stdin(dump.text())
        .assert()
        .code(2);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let row = |name: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}  ")))
            .unwrap_or_else(|| panic!("no {name} row in\n{text}"));
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(row("ids")[1], planted.ids.to_string());
    assert_eq!(row("distinct")[1], planted.distinct.to_string());
    assert_eq!(row("duplicated")[1], "18");
    assert_eq!(row("not increasing")[1], "22");
    assert_eq!(row("future")[1], "2");
    assert_eq!(row("before platform")[1], "0");
    assert_eq!(row("saturated units")[1], "1");
    assert_eq!(row("bad")[1], "2");
    assert!(text.contains("Duplicated values (18, the first 2 listed; --list shows more):"));
    assert!(text.contains("From the future (2):"));
    assert_eq!(
        row("2,3"),
        [
            "2,3",
            "40",
            "2024-12-31T22:59:59.995Z",
            "2024-12-31T23:00:00.019Z",
            "20",
            "0"
        ]
    );
    assert!(text.ends_with(
        "Look at: duplicates, IDs not increasing on a node, IDs from the future, tokens that are \
         not IDs.\n"
    ));
}

/// A clean stream exits 0 and says so; files are read in turn, and a bad
/// token in one is named by file and line.
#[test]
fn files_and_a_clean_dump() {
    let dir = Scratch::new();
    let twitter = Layout::twitter();
    let id = |ms, seq| {
        twitter
            .compose(ms, &[("machine", 5), ("sequence", seq)])
            .unwrap()
    };
    let first = dir.file(
        "first.txt",
        &format!("{} {}\n", id(NOW - 10, 0), id(NOW - 10, 1)),
    );
    let second = dir.file("second.txt", &format!("{}\n", id(NOW - 5, 0)));
    let audit = |files: &[&std::path::PathBuf]| {
        snowflake()
            .args(["audit", "--now", NOW_FLAG])
            .args(files)
            .assert()
    };
    let out = audit(&[&first, &second]).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("Audit of 3 IDs read as twitter"), "{text}");
    assert!(text.ends_with("Nothing looks wrong.\n"), "{text}");
    // A bad line is bad input (status 2, and where it is); a file that
    // cannot be read is not (status 1).
    std::fs::write(&second, "\n\n0xzz\n").unwrap();
    audit(&[&first, &second])
        .code(2)
        .stderr(predicates::str::starts_with(format!(
            "{} line 3: id \"0xzz\" is not hex: 'z' is not allowed",
            second.display()
        )));
    let missing = dir.join("missing.txt");
    audit(&[&missing])
        .code(1)
        .stderr(predicates::str::starts_with(format!(
            "error: cannot read {}: No such file",
            missing.display()
        )));
}

/// Any form, any layout: base62 Mastodon IDs, one from 1970 (before
/// Mastodon began) and one an hour ahead, one millisecond used to its last
/// sequence number.
#[test]
fn another_layout_and_text_form() {
    let mastodon = Layout::mastodon();
    let ids: Vec<Id> = [
        (1_000, 0),
        (NOW - 1000, 0),
        (NOW - 1000, 65535),
        (NOW + 3_600_000, 0),
    ]
    .iter()
    .map(|&(ms, seq)| mastodon.compose(ms, &[("sequence", seq)]).unwrap())
    .collect();
    let text: String = ids
        .iter()
        .map(|id| format!("{}\n", id.to_text(TextForm::Base62)))
        .collect();
    let out = snowflake()
        .args([
            "audit", "--layout", "mastodon", "--format", "base62", "--json",
        ])
        .args(["--now", NOW_FLAG])
        .write_stdin(text.clone())
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["name"], "mastodon");
    assert_eq!(
        (v["ids"].as_u64(), v["distinct"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(v["before_platform"], 1);
    assert_eq!(
        v["before_platform_ids"][0]["time"],
        "1970-01-01T00:00:01.000Z"
    );
    assert_eq!(v["future"], 1);
    assert_eq!(v["saturated_units"], 1);
    // One node: Mastodon's layout has no node field.
    assert_eq!(v["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(v["nodes"][0]["node"], serde_json::json!({}));
    // Decimal reading of base62 text fails on every token, by line.
    let out = snowflake()
        .args(["audit", "--layout", "mastodon", "--now", NOW_FLAG])
        .write_stdin(text)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("line ")).count(),
        4,
        "{stderr}"
    );
}

#[test]
fn bad_settings_exit_2() {
    for (args, expected) in [
        (
            &["--layout", "all"][..],
            "an audit reads its IDs under one layout",
        ),
        (&["--format", "base64"][..], "base64"),
        (&["--now", "soon"][..], "now \"soon\" is not a time"),
        (&["--list", "-1"][..], "a listing holds 0 to 1000000 IDs"),
        (
            &["-", "other.txt"][..],
            "- reads IDs from stdin and comes alone",
        ),
    ] {
        snowflake()
            .arg("audit")
            .args(args)
            .write_stdin("1\n")
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(expected));
    }
}

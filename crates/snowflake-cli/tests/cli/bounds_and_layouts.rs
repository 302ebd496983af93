//! `bounds` and `layouts`: ID ranges from times, the presets' table and the
//! time each has left, and a 53-bit layout through every command.

use serde_json::Value;

use crate::support::{stderr_of, stdout_of};

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
    let v: Value = serde_json::from_str(&out).unwrap();
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
    // The presets as the shared vectors list them: the independent word on
    // the core's table.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/vectors.json");
    let vectors: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let presets = vectors["presets"].as_array().unwrap();
    for preset in presets {
        let name = preset["name"].as_str().unwrap();
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name}: {table}"
        );
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
    let v: Value = serde_json::from_str(&stdout_of(&["layouts", "--json"])).unwrap();
    assert_eq!(v[0]["nodes"], 1024);
    assert_eq!(v[0]["ids_per_ms"], 4096.0);
    assert_eq!(v[3]["tick_ms"], 10);
    // JavaScript-safe exactly where the widths add up to 53 bits or fewer.
    assert_eq!(v.as_array().unwrap().len(), presets.len());
    for (layout, preset) in v.as_array().unwrap().iter().zip(presets) {
        let bits: u64 = preset["spec"]
            .as_str()
            .unwrap()
            .split(',')
            .map(|f| f.rsplit(':').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(layout["name"], preset["name"]);
        assert_eq!(layout["js_safe"], bits <= 53, "{}", preset["name"]);
    }
    let js53 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "js53")
        .unwrap();
    assert_eq!(js53["bits"], 53);
    assert_eq!(js53["max_id"], "9007199254740991");
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
    let stderr = stderr_of(&["decode", "--layout", "js53", "9007199254740992"], 2);
    assert!(
        stderr
            .contains("uses only 53 bits and keeps the rest 0; its IDs are 0 to 9007199254740991"),
        "{stderr}"
    );
}

/// Twitter's layout runs out at 2080-07-10T17:30:30.209Z: from
/// 2025-01-01, 1,752,168,630,209 ms, 55.5 mean Gregorian years.
#[test]
fn time_left_is_judged_at_now() {
    let table = stdout_of(&["layouts", "--now", "2025-01-01T00:00:00Z"]);
    let twitter = table.lines().find(|l| l.starts_with("twitter ")).unwrap();
    assert!(twitter.contains("  55.5 years  "), "{twitter}");
    assert!(table.ends_with("(time left from 2025-01-01T00:00:00.000Z)\n"));
    // js53 runs out on 2093-09-06: eight months left at New Year 2093,
    // flagged; none a year later.
    let table = stdout_of(&["layouts", "--now", "2093-01-01T00:00:00Z"]);
    let js53 = table.lines().find(|l| l.starts_with("js53 ")).unwrap();
    assert!(js53.contains("  8 months (under a year)  "), "{js53}");
    let table = stdout_of(&["layouts", "--now", "2094-01-01T00:00:00Z"]);
    let js53 = table.lines().find(|l| l.starts_with("js53 ")).unwrap();
    assert!(
        js53.contains("  ran out at 2093-09-06T15:47:35.552Z  "),
        "{js53}"
    );
    let v: Value =
        serde_json::from_str(&stdout_of(&["layouts", "--json", "--now", "1735689600000"])).unwrap();
    let left = &v[0]["time_left"];
    assert_eq!(left["runs_out"], "2080-07-10T17:30:30.209Z");
    assert_eq!(left["left_ms"], 3487858230209_i64 - 1735689600000);
    assert_eq!(left["left"], "55.5 years");
    assert_eq!(left["short"], false);
    // The layout's own description is unchanged beside it.
    assert_eq!(v[0]["name"], "twitter");
    assert_eq!(v[0]["nodes"], 1024);
}

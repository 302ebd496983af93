//! `plan`: proposals and checks against hand-worked layouts, and the
//! planned layout fed back to the other commands.

use serde_json::Value;
use snowflake::{Clock, SystemClock};

use crate::support::{snowflake, stdout_of, texts_at};

/// The JSON of a plan run that must exit with `code`.
fn plan_json(args: &[&str], code: i32) -> Value {
    let out = snowflake()
        .arg("plan")
        .args(args)
        .arg("--json")
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// Baidu uid-generator's default layout: 28 bits of seconds since
/// 2016-05-20, 22 bits of worker, 13 of sequence.
///
/// By hand: 2016-05-20T00:00:00Z is 1463702400 s, and 2^28 s is 268435456 s,
/// so the time field runs out at 1732137856 s. From 2016-05-20 to
/// 2024-05-20 are 8 × 365 + 2 leap days (2020-02-29, 2024-02-29) = 2922
/// days; to 2024-11-20, 11 + 30 + 31 + 31 + 30 + 31 + 20 = 184 days more:
/// 3106 days, 268358400 s. The remaining 268435456 − 268358400 = 77056 s are
/// 21 h 24 min 16 s: it runs out at 2024-11-20T21:24:16Z, 8.5 years into a
/// ten-year lifetime (3106 days and 21 h of 3652 days: 0.85).
#[test]
fn baidu_default_runs_out_in_2024() {
    let args = [
        "--rate",
        "8192",
        "--nodes",
        "4194304",
        "--years",
        "10",
        "--from",
        "2016-05-20",
        "--layout",
        "time:28,worker:22,sequence:13",
        "--tick-ms",
        "1000",
        "--epoch",
        "2016-05-20T00:00:00Z",
    ];
    let v = plan_json(&args, 1);
    assert_eq!(v["layout"], "time:28,worker:22,sequence:13");
    assert_eq!(v["epoch_ms"], 1463702400000_i64);
    assert_eq!(v["tick_ms"], 1000);
    assert_eq!(v["runs_out"], "2024-11-20T21:24:16.000Z");
    assert_eq!(v["runs_out_ms"], 1732137856000_i64);
    assert_eq!(v["fits"], false);
    assert_eq!(texts_at(&v["shortfalls"], "kind"), ["lifetime"]);
    let headroom = v["headroom"]["years"]["headroom"].as_f64().unwrap();
    assert!((0.85..0.86).contains(&headroom), "{headroom}");
    assert_eq!(v["headroom"]["nodes"]["headroom"], 1.0);
    assert_eq!(v["headroom"]["rate_per_sec"]["headroom"], 1.0);
    // The text says when and by how much, and the exit status is 1.
    let out = snowflake().arg("plan").args(args).assert().code(1);
    let output = out.get_output();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(
            "- the time field runs out at 2024-11-20T21:24:16.000Z, 8.5 years into the 10 years \
             asked for (until 2026-05-20T00:00:00.000Z)"
        ),
        "{text}"
    );
    assert!(text.contains("0.85x"), "{text}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: layout time:28,worker:22,sequence:13 falls short of the needs in 1 way; see above\n"
    );
    // Eight years from its epoch it still fits.
    let mut eight = args;
    eight[5] = "8";
    assert_eq!(plan_json(&eight, 0)["fits"], true);
}

/// Twitter's needs from its launch day: 4,096 IDs a millisecond, 1,024
/// nodes, 69 years. 2010-11-04 to 2079-11-04 is 69 × 365 + 17 leap days
/// (2012 … 2076) = 25,202 days = 2,177,452,800,000 ms, which 2^41 ms
/// (2,199,023,255,552) holds and 2^40 does not: 41 + 10 + 12 = 63 bits, no
/// spare. A 70th year (25,568 days, 2,209,075,200,000 ms) needs a 42nd bit.
#[test]
fn twitter_needs_make_twitter_layout_and_a_70th_year_does_not_fit() {
    let twitter = |years| {
        [
            "--rate",
            "4096000",
            "--nodes",
            "1024",
            "--years",
            years,
            "--from",
            "2010-11-04",
        ]
    };
    let v = plan_json(&twitter("69"), 0);
    assert_eq!(v["layout"], "time:41,node:10,sequence:12");
    assert_eq!(v["epoch_ms"], 1288828800000_i64);
    assert_eq!(v["tick_ms"], 1);
    // Twitter's own runs out at 2080-07-10T17:30:30.209Z, with an epoch
    // 01:42:54.657 later in the day.
    assert_eq!(v["runs_out"], "2080-07-10T15:47:35.552Z");
    assert_eq!(v["needed_bits"]["total"], 63);
    let v = plan_json(&twitter("70"), 1);
    assert_eq!(v["layout"], Value::Null);
    assert_eq!(v["needed_bits"]["time"], 42);
    assert_eq!(
        texts_at(&v["alternatives"], "give_up"),
        ["lifetime", "rate", "nodes"]
    );
    assert_eq!(
        v["alternatives"][0]["layout"],
        "time:41,node:10,sequence:12"
    );
    assert_eq!(
        v["alternatives"][1]["layout"],
        "time:42,node:10,sequence:11"
    );
    let text = String::from_utf8(
        snowflake()
            .arg("plan")
            .args(twitter("70"))
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(
        text.contains(
            "These needs take 64 bits (time 42, node 10, sequence 12), 1 more than the 63"
        ),
        "{text}"
    );
    assert!(text.contains("1. a shorter lifetime: --layout time:41,node:10,sequence:12 --tick-ms 1 --epoch 1288828800000"));
}

/// What `plan` proposes is accepted by every command as `--layout SPEC
/// --tick-ms N --epoch MS`: compose and decode give back what went in,
/// generate issues IDs of the node asked for, audit reads them clean, and
/// `plan --layout` finds that it meets the needs it was made for.
#[test]
fn the_planned_layout_works_everywhere() {
    let needs = [
        "--rate",
        "50000",
        "--nodes",
        "300",
        "--years",
        "30",
        "--tick-ms",
        "10",
        "--from",
        "2025-03-15T12:00:00Z",
    ];
    let v = plan_json(&needs, 0);
    let spec = v["layout"].as_str().unwrap().to_string();
    let tick = v["tick_ms"].to_string();
    let epoch = v["epoch_ms"].to_string();
    // By hand: 30 years and 12 h from the epoch are 94,672,800,000 ticks
    // of 10 ms, 37 bits; 300 nodes 9; 500 a tick 9. The 8 spare bits go
    // to rate, time, node, rate, time, node, rate, time (the least
    // headroom each time, as the core's plan tests deal them).
    assert_eq!(spec, "time:40,node:11,sequence:12");
    assert_eq!(tick, "10");
    // The epoch is the start of the first day.
    assert_eq!(epoch, "1741996800000");
    assert_eq!(v["bits"], 63);
    let layout = ["--layout", &spec, "--tick-ms", &tick, "--epoch", &epoch];
    let composed: Value = serde_json::from_str(&stdout_of(
        &[
            &[
                "compose",
                "-t",
                "2030-01-02T03:04:05.670Z",
                "-f",
                "node=299",
                "--sequence",
                "7",
                "--json",
            ][..],
            &layout[..],
        ]
        .concat(),
    ))
    .unwrap();
    let id = composed["id"].as_str().unwrap().to_string();
    let decoded: Value = serde_json::from_str(&stdout_of(
        &[&["decode", &id, "--json"][..], &layout[..]].concat(),
    ))
    .unwrap();
    assert_eq!(decoded["time"], "2030-01-02T03:04:05.670Z");
    assert_eq!(decoded["fields"]["node"], 299);
    assert_eq!(decoded["fields"]["sequence"], 7);
    let ids = stdout_of(&[&["generate", "-n", "5", "-f", "node=42"][..], &layout[..]].concat());
    for id in ids.lines() {
        let d: Value = serde_json::from_str(&stdout_of(
            &[&["decode", id, "--json"][..], &layout[..]].concat(),
        ))
        .unwrap();
        assert_eq!(d["fields"]["node"], 42);
    }
    let audit = snowflake()
        .args([&["audit", "--json"][..], &layout[..]].concat())
        .write_stdin(ids)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let audit: Value = serde_json::from_slice(&audit).unwrap();
    assert_eq!(
        (audit["ids"].as_u64(), audit["clean"].as_bool()),
        (Some(5), Some(true))
    );
    assert_eq!(audit["nodes"][0]["node"]["node"], 42);
    let check = plan_json(&[&needs[..6], &needs[8..], &layout[..]].concat(), 0);
    assert_eq!(check["fits"], true);
}

#[test]
fn js_safe_plans_stay_under_2_to_the_53() {
    let v = plan_json(
        &[
            "--rate",
            "1000",
            "--nodes",
            "64",
            "--years",
            "20",
            "--from",
            "2025-01-01",
            "--js-safe",
        ],
        0,
    );
    assert_eq!(v["bits"], 53);
    assert_eq!(v["js_safe"], true);
    assert_eq!(v["needs"]["width"], 53);
    // The largest ID of the layout, composed at its last moment with every
    // field full, is a number JavaScript holds.
    let spec = v["layout"].as_str().unwrap();
    let last = v["runs_out_ms"].as_i64().unwrap() - 1;
    let layout = snowflake::Layout::parse(spec)
        .unwrap()
        .with_epoch_ms(v["epoch_ms"].as_i64().unwrap())
        .unwrap();
    let max_node = layout.field("node").unwrap().max();
    let max_seq = layout.sequence().unwrap().max();
    let id = layout
        .compose(last, &[("node", max_node), ("sequence", max_seq)])
        .unwrap();
    assert_eq!(id.get(), snowflake::Layout::JS_MAX_SAFE);
}

/// Needs no single concession fits: said on stdout and stderr alike.
#[test]
fn needs_far_past_63_bits_ask_for_less_of_several() {
    let out = snowflake()
        .args([
            "plan",
            "--rate",
            "18446744073709551615",
            "--nodes",
            "18446744073709551615",
        ])
        .args(["--years", "1000", "--from", "2025-01-01"])
        .assert()
        .code(1);
    let output = out.get_output();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(
            "These needs take 164 bits (time 45, node 64, sequence 55), 101 more than the 63"
        ),
        "{text}"
    );
    assert!(text.ends_with("No one thing given up makes them fit; ask for less of several.\n"));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: the needs take 164 bits, more than the 63 a layout has; ask for less of several\n"
    );
}

/// Without --from the lifetime starts at the clock's now.
#[test]
fn the_lifetime_starts_now_by_default() {
    let before = SystemClock.now_ms();
    let v = plan_json(&["--rate", "1", "--nodes", "1", "--years", "1"], 0);
    let after = SystemClock.now_ms();
    let from = v["needs"]["from_ms"].as_i64().unwrap();
    assert!((before..=after).contains(&from), "{before} {from} {after}");
}

/// Every bad flag: one line on stderr naming it, status 2, nothing on stdout.
#[test]
fn bad_needs_exit_2_with_one_clear_line() {
    let base = ["plan", "--rate", "10", "--nodes", "2", "--years", "5"];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--rate", "0"],
            "a peak rate is a whole number of IDs a second, at least 1",
        ),
        (&["--rate", "-5"], "a peak rate is a whole number"),
        (
            &["--nodes", "x"],
            "a number of nodes is a whole number, at least 1",
        ),
        (&["--years", "1001"], "a lifetime is 1 to 1000 years"),
        (&["--years", "0"], "a lifetime is 1 to 1000 years"),
        (&["--tick-ms", "0"], "a tick is 1 to 86400000 ms (a day)"),
        (&["--from", "someday"], "from \"someday\" is not a time"),
        (
            &["--from", "10000-01-01T00:00:00Z"],
            "from \"10000-01-01T00:00:00Z\" is not a time",
        ),
        (
            &["--from", "-99999999999999"],
            "a plan starts in the years 0001 to 9999",
        ),
        (&["--epoch", "0"], "--layout"),
        (&["--layout", "flickr"], "unknown layout \"flickr\""),
        (&["--layout", "time:41,node:30"], "add up to 71 bits"),
    ];
    for (extra, expected) in cases {
        let mut args = base.to_vec();
        for pair in extra.chunks(2) {
            match args.iter().position(|a| *a == pair[0]) {
                Some(at) => args[at + 1] = pair[1],
                None => args.extend_from_slice(pair),
            }
        }
        let out = snowflake().args(&args).assert().code(2);
        let output = out.get_output();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

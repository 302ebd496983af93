use serde_json::Value;

use crate::support::ops::stdout_of;

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

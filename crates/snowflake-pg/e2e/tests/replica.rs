use std::time::Duration;

use crate::support::{ITEMS, NODE, Server, SkewedClock, assert_all_above};

/// A primary and a streaming standby (pg_basebackup, primary_conninfo) on
/// loopback. The standby refuses to issue; the primary is killed with
/// SIGKILL under load; the standby is promoted and inserts: every ID it
/// issues is above every ID the primary handed out, committed or not.
#[test]
fn a_promoted_standby_issues_above_everything_the_primary_handed_out() {
    let primary = Server::new(&[NODE]);
    primary.sql(ITEMS);
    let standby = Server::standby_of(&primary, &[]);
    let err = standby.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("standby"), "{err}");

    let highest = primary.kill9_mid_load(primary.load(true));

    standby.promote();
    let out = standby.sql(
        "INSERT INTO items (before_ms, client) SELECT 0, 99 FROM generate_series(1, 1000) RETURNING id",
    );
    let after: Vec<u64> = out
        .lines()
        .map(|l| l.parse::<i64>().unwrap() as u64)
        .collect();
    assert_eq!(after.len(), 1000);
    assert_all_above(&after, highest, "from the promoted standby");
}

/// The case the mark cannot cover alone: a standby that stopped receiving
/// WAL before the primary's last marks (its streaming cut), and whose
/// clock is half a second behind the primary's. Promoted right after the
/// primary is killed, it still issues above every ID the primary handed
/// out, because it resumes above its own clock plus the reserve window
/// (1 s), which covers a clock that far behind (the assumption the design
/// states: the two clocks agree within the window).
#[test]
fn a_standby_that_missed_the_last_marks_with_a_clock_behind_still_issues_above() {
    let primary = Server::new(&[NODE]);
    primary.sql(ITEMS);
    let clock = SkewedClock::new("-0.5");
    let env = clock.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let standby = Server::standby_of(&primary, &env);
    primary.next_id();
    // Cut the standby's stream: it keeps what it replayed, and nothing more.
    standby.configure_auto("primary_conninfo = ''");
    standby.reload();
    std::thread::sleep(Duration::from_millis(500));

    let clients = primary.load(false);
    // Past the standby's last mark: more than a reserve window of IDs.
    std::thread::sleep(Duration::from_millis(2_500));
    let highest = primary.kill9_mid_load(clients);
    let replayed: i64 = standby
        .sql("SELECT last_value FROM snowflake_internal.mark")
        .parse()
        .unwrap();
    let highest_ms = crate::support::twitter()
        .decode(snowflake::Id::new(highest))
        .unwrap()
        .timestamp_ms();
    assert!(
        replayed < highest_ms,
        "the standby's mark {replayed} covers the primary's last ID at {highest_ms}: the stream was not cut"
    );

    standby.promote();
    assert_all_above(&[standby.next_id()], highest, "from the promoted standby");
}

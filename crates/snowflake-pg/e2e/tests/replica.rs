use std::time::Duration;

use crate::support::{ITEMS, NODE, Server, assert_node, ids, inserts, selects};

/// A primary and a streaming standby (pg_basebackup, primary_conninfo) on
/// loopback. The standby refuses to issue; the primary is killed with
/// SIGKILL under load; the standby is promoted and inserts: every ID it
/// issues is above every ID the primary handed out, committed or not.
#[test]
fn a_promoted_standby_issues_above_everything_the_primary_handed_out() {
    let primary = Server::new(&[NODE]);
    primary.sql(ITEMS);
    let standby = Server::standby_of(&primary);
    let err = standby.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("standby"), "{err}");

    let mut clients = Vec::new();
    for c in 0..4 {
        clients.push(primary.client("postgres", inserts(c, 1_000_000)));
        clients.push(primary.client("postgres", selects(1_000_000, false)));
    }
    std::thread::sleep(Duration::from_millis(1_500));
    primary.kill9();
    let mut seen = Vec::new();
    for client in clients {
        seen.extend(ids(&client.finish().lines));
    }
    assert!(
        seen.len() > 1_000,
        "too few IDs before the crash: {}",
        seen.len()
    );
    let highest = *seen.iter().max().unwrap();

    standby.promote();
    let out = standby.sql(
        "INSERT INTO items (before_ms, client) SELECT 0, 99 FROM generate_series(1, 1000) RETURNING id",
    );
    let after: Vec<u64> = out
        .lines()
        .map(|l| l.parse::<i64>().unwrap() as u64)
        .collect();
    assert_eq!(after.len(), 1000);
    for id in after {
        assert_node(id);
        assert!(
            id > highest,
            "{id} from the promoted standby, at or below {highest} from the primary"
        );
    }
}

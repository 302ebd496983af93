use std::collections::HashSet;

use snowflake::Id;

use crate::support::{ITEMS, NODE, Server, assert_node, inserts, twitter};

const CLIENTS: usize = 16;
const ROWS: usize = 20_000;

/// 16 connections insert 20,000 rows each, concurrently for their whole
/// run: no ID twice (the primary key would refuse it, and the clients'
/// own lists agree), every ID of the server's node, its time between the
/// clock read just before and just after it, and each client's IDs
/// increasing.
#[test]
fn sixteen_connections_insert_twenty_thousand_rows_each() {
    let server = Server::new(&[NODE]);
    server.sql(ITEMS);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| server.client("postgres", inserts(c, ROWS)))
        .collect();
    let layout = twitter();
    let mut seen = HashSet::new();
    let mut spans = Vec::new();
    for (c, client) in clients.into_iter().enumerate() {
        let done = client.finish();
        assert!(done.ok, "client {c}: {}", done.stderr);
        assert_eq!(done.lines.len(), ROWS, "client {c}");
        let mut last = 0;
        let (mut first_ms, mut last_ms) = (i64::MAX, 0);
        for line in &done.lines {
            let parts: Vec<i64> = line.split('|').map(|p| p.parse().unwrap()).collect();
            let (id, before, after) = (parts[0] as u64, parts[1], parts[2]);
            assert!(id > last, "client {c}: {id} after {last}");
            last = id;
            assert!(seen.insert(id), "{id} issued twice");
            assert_node(id);
            let time = layout.decode(Id::new(id)).unwrap().timestamp_ms();
            assert!(
                before <= time && time <= after,
                "{id}'s time {time} is not between {before} and {after}"
            );
            first_ms = first_ms.min(before);
            last_ms = last_ms.max(after);
        }
        spans.push((first_ms, last_ms));
    }
    assert_eq!(seen.len(), CLIENTS * ROWS);
    assert_eq!(
        server.sql("SELECT count(*), count(DISTINCT id) FROM items"),
        format!("{0}|{0}", CLIENTS * ROWS)
    );
    // At once for their whole run: every client started before any ended.
    let last_start = spans.iter().map(|s| s.0).max().unwrap();
    let first_end = spans.iter().map(|s| s.1).min().unwrap();
    assert!(
        last_start < first_end,
        "the clients did not all run at once: the last started at {last_start}, the first ended at {first_end}"
    );
}

use serde_json::Value;
use snowflake::{Id, Layout};

use crate::support::{NODE, Server, repo_file};

/// A timestamptz literal of Unix milliseconds.
fn ts(ms: i64) -> String {
    format!("(timestamptz '1970-01-01Z' + {ms} * interval '1 millisecond')")
}

/// Every compose vector of `testdata/vectors.json` through the SQL
/// functions: compose gives the ID, time, field, decode and the bounds
/// read it back, the text forms spell it both ways; decode's JSON is the
/// core's (what `snowflake decode --json` and the API print).
#[test]
fn the_read_functions_agree_with_the_shared_vectors() {
    let server = Server::new(&[NODE]);
    let vectors: Value =
        serde_json::from_str(&std::fs::read_to_string(repo_file("testdata/vectors.json")).unwrap())
            .unwrap();
    let cases = vectors["compose"].as_array().unwrap();
    assert!(cases.len() > 10);
    let mut checked = 0;
    let mut sql = String::from("SELECT ");
    let mut expected = Vec::new();
    for case in cases {
        let layout = case["layout"].as_str().unwrap();
        let core = Layout::parse(layout).unwrap();
        let ms = case["timestamp_ms"].as_i64().unwrap();
        let id: u64 = case["id"].as_str().unwrap().parse().unwrap();
        // bigint holds an ID past 2^63 as its two's complement.
        let sid = id as i64;
        // The SQL functions take the layout as snowflake.layout does, a
        // preset or a spec: a vector of another epoch or tick is not theirs.
        let epoch = case["epoch_ms"].as_i64().unwrap_or(core.epoch_ms());
        let tick = case["tick_ms"].as_u64().unwrap_or(core.tick_ms());
        if (epoch, tick) != (core.epoch_ms(), core.tick_ms()) {
            continue;
        }
        let fields: Vec<String> = case["fields"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut row = vec![format!(
            "snowflake.compose({}, '{}', '{layout}')",
            ts(ms),
            fields.join(",")
        )];
        expected.push(sid.to_string());
        row.push(format!(
            "floor(extract(epoch FROM snowflake.time({sid}, '{layout}')) * 1000)::bigint"
        ));
        expected.push(core.decode(Id::new(id)).unwrap().timestamp_ms().to_string());
        for (name, value) in case["fields"].as_object().unwrap() {
            row.push(format!("snowflake.field({sid}, '{name}', '{layout}')"));
            expected.push(value.to_string());
        }
        for (form, text) in case["text"].as_object().unwrap() {
            let text = text.as_str().unwrap();
            row.push(format!("snowflake.to_text({sid}, '{form}')"));
            expected.push(text.to_owned());
            row.push(format!("snowflake.from_text('{text}', '{form}')"));
            expected.push(sid.to_string());
        }
        row.push(format!(
            "snowflake.min_id({0}, '{layout}') <= {sid} AND {sid} <= snowflake.max_id({0}, '{layout}')",
            ts(ms)
        ));
        expected.push("t".into());
        if checked > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&row.join(", "));
        checked += 1;
    }
    let got: Vec<String> = server.sql(&sql).split('|').map(str::to_owned).collect();
    assert_eq!(got, expected);

    for case in cases.iter().step_by(7) {
        let layout = case["layout"].as_str().unwrap();
        let id: u64 = case["id"].as_str().unwrap().parse().unwrap();
        let core = Layout::parse(layout).unwrap();
        let json: Value = serde_json::from_str(&server.sql(&format!(
            "SELECT snowflake.decode({}, '{layout}')",
            id as i64
        )))
        .unwrap();
        let want = serde_json::to_value(core.decode(Id::new(id)).unwrap()).unwrap();
        assert_eq!(json, want, "{layout} {id}");
    }
}

/// The error vectors: refused with the field and value in the message.
#[test]
fn compose_refuses_what_the_core_refuses() {
    let server = Server::new(&[NODE]);
    let err = server.sql_err(&format!(
        "SELECT snowflake.compose({}, 'datacenter=1,machine=32', 'twitter')",
        ts(1_288_834_975_657)
    ));
    assert!(err.contains("machine 32 is out of range: 0 to 31"), "{err}");
    let err = server.sql_err("SELECT snowflake.decode(1, 'no-such-layout')");
    assert!(err.contains("no-such-layout"), "{err}");
    let err = server.sql_err("SELECT snowflake.field(1, 'galaxy', 'twitter')");
    assert!(err.contains("galaxy"), "{err}");
}

/// IMMUTABLE and PARALLEL SAFE: usable in an expression index and in
/// partition bounds, and the planner may run them in parallel workers.
#[test]
fn the_read_functions_serve_indexes_and_partition_bounds() {
    let server = Server::new(&[NODE]);
    server.sql(
        "CREATE TABLE events (id bigint NOT NULL DEFAULT snowflake.next_id()) PARTITION BY RANGE (id);
         CREATE TABLE events_2026 PARTITION OF events FOR VALUES
           FROM (snowflake.min_id('2026-01-01Z', 'twitter')) TO (snowflake.min_id('2027-01-01Z', 'twitter'));
         CREATE TABLE events_later PARTITION OF events FOR VALUES
           FROM (snowflake.min_id('2027-01-01Z', 'twitter')) TO (MAXVALUE);
         CREATE INDEX ON events_2026 (snowflake.time(id, 'twitter'));",
    );
    server.sql("INSERT INTO events SELECT FROM generate_series(1, 100)");
    let in_2026 = server.sql("SELECT count(*) FROM events_2026");
    let in_later = server.sql("SELECT count(*) FROM events_later");
    let year = server.sql("SELECT extract(year FROM now() AT TIME ZONE 'UTC')");
    let expected = if year == "2026" {
        ("100", "0")
    } else {
        ("0", "100")
    };
    assert_eq!((in_2026.as_str(), in_later.as_str()), expected);
    assert_eq!(
        server.sql(
            "SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE nspname = 'snowflake' AND (provolatile <> 'i' OR proparallel <> 's')
             ORDER BY 1"
        ),
        "adopt_settings\nnext_id"
    );
}

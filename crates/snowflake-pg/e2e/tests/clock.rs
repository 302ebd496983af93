use std::time::Duration;

use crate::support::{NODE, Server, SkewedClock, assert_node, ids, selects};

/// A server whose clock can be set back while it runs.
struct Skewed {
    server: Server,
    clock: SkewedClock,
}

impl Skewed {
    fn new() -> Skewed {
        Skewed::with(&[NODE])
    }

    fn with(conf: &[&str]) -> Skewed {
        let clock = SkewedClock::new("+0");
        let env = clock.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let server = Server::with_env(conf, &env);
        Skewed { server, clock }
    }

    fn set(&self, seconds: &str) {
        self.clock.set(seconds);
    }
}

/// Set back by less than the tolerance (5 ms), the clock is waited out;
/// by two seconds, next_id() fails and says by how much; once the clock is
/// back, it issues again, above everything before.
#[test]
fn a_clock_set_back_is_waited_out_or_refused_with_its_size() {
    let skewed = Skewed::new();
    let server = &skewed.server;
    let mut last = 0;
    for _ in 0..5 {
        let id = server.next_id();
        assert!(id > last);
        last = id;
    }
    skewed.set("-0.003");
    for _ in 0..5 {
        let id = server.next_id();
        assert!(id > last, "{id} after {last}, the clock 3 ms back");
        last = id;
    }
    skewed.set("-2");
    let err = server.sql_err("SELECT snowflake.next_id()");
    let by_ms: u64 = err
        .split("went backwards by ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in: {err}"));
    // Two seconds back, less the time since the last ID.
    assert!((1_000..=2_000).contains(&by_ms), "{err}");
    skewed.set("+0");
    let id = server.next_id();
    assert_node(id);
    assert!(
        id > last,
        "{id} after the clock came back, at or below {last}"
    );
}

/// The clock set back three seconds across a crash, further than the
/// mark's window: the restarted server refuses to issue, naming how far
/// behind its mark the clock is, rather than issue below what it handed
/// out; once the clock is back, it issues above. The IDs come from a
/// transaction that never commits, on a server whose WAL writer sleeps
/// and that runs no autovacuum, so that only next_id()'s own flush makes
/// the mark durable. Without the mark in WAL, or without its flush, the
/// server would issue at once, three seconds in the past.
#[test]
fn a_clock_set_back_across_a_crash_is_refused_until_it_passes_the_mark() {
    let skewed = Skewed::with(&[NODE, "wal_writer_delay = '10s'", "autovacuum = off"]);
    let server = &skewed.server;
    let mut script = selects(100, false);
    script = script.replace("ROLLBACK;", "SELECT pg_sleep(60);");
    let client = server.client("postgres", script);
    // The IDs are out once the client sleeps, in its transaction.
    server.wait_for(
        "EXISTS (SELECT FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60);' AND state = 'active')",
    );
    server.kill9();
    let seen = ids(&client.finish().lines);
    assert_eq!(seen.len(), 100, "the IDs before the crash");
    let highest = *seen.iter().max().unwrap();
    skewed.set("-3");
    server.start().unwrap();
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("behind the high-water mark"), "{err}");
    let behind_ms: u64 = err
        .split(" ms behind")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in: {err}"));
    assert!((2_000..=4_500).contains(&behind_ms), "{err}");
    skewed.set("+0");
    std::thread::sleep(Duration::from_millis(10));
    let id = server.next_id();
    assert!(id > highest, "{id} after the crash, at or below {highest}");
}

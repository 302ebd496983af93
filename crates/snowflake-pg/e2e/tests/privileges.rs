use std::time::{Duration, Instant};

use crate::support::{NODE, Server};

/// `next_id()` is for whom the owner grants it; a role it is granted to
/// can issue and do nothing else to the generator: not set, read, lock,
/// alter or drop its mark, not replace its functions, not change its
/// settings. The read functions are everyone's. Through all of it the
/// state only moves forward.
#[test]
fn a_role_may_issue_if_granted_and_never_move_rewind_or_freeze_the_state() {
    let server = Server::new(&[NODE]);
    server.sql("CREATE ROLE app LOGIN; CREATE ROLE stranger LOGIN");
    let as_role = |role: &str, sql: &str| server.psql(role, "postgres", sql);

    let err = as_role("stranger", "SELECT snowflake.next_id()").unwrap_err();
    assert!(err.contains("permission denied"), "{err}");
    // Pure functions: everyone's.
    assert_eq!(
        as_role(
            "stranger",
            "SELECT snowflake.field(4194439168, 'machine', 'twitter')"
        )
        .unwrap(),
        "1"
    );

    server.sql("GRANT EXECUTE ON FUNCTION snowflake.next_id() TO app");
    let first: i64 = as_role("app", "SELECT snowflake.next_id()")
        .unwrap()
        .parse()
        .unwrap();
    let mark = server.sql("SELECT last_value FROM snowflake_internal.mark");

    let attempts = [
        "SELECT setval('snowflake_internal.mark', 1)",
        "SELECT setval('snowflake_internal.mark', 9000000000000)",
        "SELECT nextval('snowflake_internal.mark')",
        "SELECT last_value FROM snowflake_internal.mark",
        "BEGIN; LOCK TABLE snowflake_internal.mark IN ACCESS EXCLUSIVE MODE; COMMIT",
        "BEGIN; LOCK TABLE snowflake_internal.mark IN SHARE MODE; COMMIT",
        "ALTER SEQUENCE snowflake_internal.mark RESTART WITH 1",
        "DROP SEQUENCE snowflake_internal.mark",
        "CREATE RULE r AS ON UPDATE TO snowflake_internal.mark DO INSTEAD NOTHING",
        "CREATE TABLE snowflake_internal.t ()",
        "DROP FUNCTION snowflake.next_id()",
        "SELECT snowflake.adopt_settings()",
        "DELETE FROM snowflake_internal.settings_text",
        "ALTER FUNCTION snowflake.next_id() RENAME TO old",
        "CREATE FUNCTION snowflake.mine() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "CREATE OR REPLACE FUNCTION snowflake.next_id() RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'",
        "SET snowflake.fields = 'datacenter=1,machine=8'",
        "SET snowflake.layout = 'discord'",
        "ALTER SYSTEM SET snowflake.fields = 'datacenter=1,machine=8'",
        "ALTER ROLE app SET snowflake.fields = 'datacenter=1,machine=8'",
        "DROP EXTENSION snowflake",
        "BEGIN READ ONLY; SELECT snowflake.next_id(); COMMIT",
    ];
    for sql in attempts {
        let result = as_role("app", sql);
        assert!(result.is_err(), "app could: {sql} -> {result:?}");
    }
    assert_eq!(
        server.sql("SELECT last_value FROM snowflake_internal.mark"),
        mark,
        "the mark moved"
    );
    let after: i64 = as_role("app", "SELECT snowflake.next_id()")
        .unwrap()
        .parse()
        .unwrap();
    assert!(after > first, "{after} after {first}");
    // And the IDs are still the server's node, whatever app tried to set.
    assert_eq!(
        server.sql(&format!(
            "SELECT snowflake.field({after}, 'machine', 'twitter')"
        )),
        "7"
    );
}

/// No role can freeze the generator by asking for a lock on the mark.
/// `CREATE RULE` asks for the strongest lock before PostgreSQL checks who
/// owns the table; while a transaction holds any lock on the mark (one
/// that read or wrote it, a prepared one, pg_dump), that request would
/// queue and every mark write behind it. The mark's schema grants nothing
/// to PUBLIC, so a stranger's request fails at once, and a caller's
/// next_id() (the first of the server, which must read and write the
/// mark) goes on.
#[test]
fn a_stranger_cannot_queue_a_lock_on_the_mark_and_freeze_next_id() {
    let server = Server::new(&[NODE]);
    server.sql("CREATE ROLE stranger LOGIN");
    let holder = server.client(
        "postgres",
        "SET application_name = 'holder'; BEGIN; \
         SELECT last_value FROM snowflake_internal.mark; SELECT pg_sleep(120); COMMIT;"
            .to_owned(),
    );
    server.wait_for(
        "EXISTS (SELECT FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
         WHERE a.application_name = 'holder' AND l.granted \
         AND l.relation = 'snowflake_internal.mark'::regclass)",
    );
    let stranger = server.client(
        "stranger",
        "SET application_name = 'stranger'; \
         CREATE RULE r AS ON UPDATE TO snowflake_internal.mark DO INSTEAD NOTHING;"
            .to_owned(),
    );
    // Refused at once, or queued: either is seen before the caller starts.
    let refused = "permission denied for schema snowflake_internal";
    let deadline = Instant::now() + Duration::from_secs(60);
    while !server.log().contains(refused)
        && server.sql(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE application_name = 'stranger' AND wait_event_type = 'Lock'",
        ) == "0"
    {
        assert!(
            Instant::now() < deadline,
            "the stranger neither failed nor queued"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let issued = server.psql(
        "postgres",
        "postgres",
        "SET statement_timeout = '5s'; SELECT snowflake.next_id()",
    );
    server.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name IN ('holder', 'stranger')",
    );
    let stranger = stranger.finish();
    holder.finish();
    assert!(
        issued.is_ok(),
        "next_id() froze behind the stranger's lock request: {issued:?}"
    );
    assert!(
        !stranger.ok && stranger.stderr.contains(refused),
        "{}",
        stranger.stderr
    );
}

/// A superuser's transaction that holds the mark (an `ALTER SEQUENCE` not
/// yet committed) holds up the first next_id() after a start, which waits
/// for the mark's lock inside the writer's turn, and every call behind it,
/// which waits for that turn. Every such call can be cancelled and ends
/// with PostgreSQL's own error and nothing else: one behind the writer, and
/// the writer itself, whose turn goes to the next caller (seen waiting on
/// the lock, not on the turn) while the cancelled session lives on. Once
/// the transaction ends, the held-up call issues and so does the next.
#[test]
fn calls_waiting_behind_a_held_mark_can_be_cancelled_and_the_generator_goes_on() {
    const CANCELLED: &str = "ERROR:  canceling statement due to user request";
    let server = Server::new(&[NODE]);
    server.stop();
    server.start().expect("the server starts again");
    let holder = server.client(
        "postgres",
        "SET application_name = 'holder'; BEGIN; \
         ALTER SEQUENCE snowflake_internal.mark CACHE 1; SELECT pg_sleep(120); COMMIT;"
            .to_owned(),
    );
    server.wait_for(
        "EXISTS (SELECT FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
         WHERE a.application_name = 'holder' AND l.granted AND l.mode = 'ShareRowExclusiveLock' \
         AND l.relation = 'snowflake_internal.mark'::regclass)",
    );
    // A caller of next_id(), seen waiting on the mark's lock; its session
    // lives on after a cancel, asleep, so that a turn it kept would show.
    let writer = |name: &str| {
        let client = server.client(
            "postgres",
            format!(
                "\\set ON_ERROR_STOP off\nSET application_name = '{name}';\n\
                 SELECT snowflake.next_id();\nSELECT pg_sleep(120);\n"
            ),
        );
        server.wait_for(&format!(
            "EXISTS (SELECT FROM pg_stat_activity \
             WHERE application_name = '{name}' AND wait_event_type = 'Lock')"
        ));
        client
    };
    let cancel = |name: &str| {
        server.sql(&format!(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '{name}'"
        ));
    };
    let asleep = |name: &str| {
        server.wait_for(&format!(
            "EXISTS (SELECT FROM pg_stat_activity \
             WHERE application_name = '{name}' AND query LIKE 'SELECT pg_sleep%')"
        ));
    };
    let first = writer("first");
    let err = server.sql_err("SET statement_timeout = '300ms'; SELECT snowflake.next_id()");
    assert_eq!(
        err, "ERROR:  canceling statement due to statement timeout",
        "a call waiting for the writer's turn"
    );
    cancel("first");
    asleep("first");
    // The writer's turn is free again: the next caller waits on the lock.
    let second = writer("second");
    cancel("holder");
    let holder = holder.finish();
    assert_eq!(
        (holder.ok, holder.stderr.trim()),
        (false, CANCELLED),
        "the holder"
    );
    asleep("second");
    cancel("second");
    cancel("first");
    let (first, second) = (first.finish(), second.finish());
    assert_eq!(
        first.stderr.trim(),
        format!("{CANCELLED}\n{CANCELLED}"),
        "the writer, then its sleep"
    );
    assert_eq!(second.stderr.trim(), CANCELLED, "only the sleep");
    let held_up = second
        .lines
        .iter()
        .find_map(|line| line.trim().parse::<u64>().ok());
    let held_up = held_up.unwrap_or_else(|| panic!("no ID in {:?}", second.lines));
    assert!(server.next_id() > held_up);
}

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
    let mark = server.sql("SELECT last_value FROM snowflake.mark");

    let attempts = [
        "SELECT setval('snowflake.mark', 1)",
        "SELECT setval('snowflake.mark', 9000000000000)",
        "SELECT nextval('snowflake.mark')",
        "SELECT last_value FROM snowflake.mark",
        "BEGIN; LOCK TABLE snowflake.mark IN ACCESS EXCLUSIVE MODE; COMMIT",
        "BEGIN; LOCK TABLE snowflake.mark IN SHARE MODE; COMMIT",
        "ALTER SEQUENCE snowflake.mark RESTART WITH 1",
        "DROP SEQUENCE snowflake.mark",
        "DROP FUNCTION snowflake.next_id()",
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
        server.sql("SELECT last_value FROM snowflake.mark"),
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

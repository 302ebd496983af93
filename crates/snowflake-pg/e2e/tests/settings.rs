use crate::support::{NODE, Server, assert_mentions};

/// A server whose node was never set issues no ID, and says which
/// settings to set: never node 0 by default.
#[test]
fn a_forgotten_node_is_refused_naming_the_settings() {
    let server = Server::new(&[]);
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert_mentions(
        &err,
        &[
            "snowflake.fields",
            "snowflake.layout",
            "datacenter=N,machine=N",
            "ALTER SYSTEM",
        ],
    );
    // Nothing was issued, so nothing was marked.
    assert_eq!(
        server.sql("SELECT last_value IS NULL OR NOT is_called FROM snowflake_internal.mark"),
        "t"
    );
}

/// A node value out of its field's range is refused with the core's words.
#[test]
fn a_node_out_of_range_is_refused() {
    let server = Server::new(&["snowflake.fields = 'datacenter=1,machine=32'"]);
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("machine 32 is out of range: 0 to 31"), "{err}");
}

/// A layout whose IDs pass 2^63 is refused for bigint, with the date they
/// would; a layout of the settings' own is used as given.
#[test]
fn a_layout_past_bigint_is_refused_with_its_date() {
    let server = Server::new(&[
        "snowflake.layout = 'time:42,node:10,sequence:12'",
        "snowflake.fields = 'node=5'",
    ]);
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("2^63"), "{err}");
    // The time field's top bit is the ID's: it turns on half-way.
    let layout = snowflake::Layout::parse("time:42,node:10,sequence:12").unwrap();
    let date = snowflake::UnixMillis(layout.timestamp_ms(1 << 41)).to_string();
    assert!(err.contains(&date), "not {date} in: {err}");

    let custom = Server::new(&[
        "snowflake.layout = 'time:41,node:10,sequence:12'",
        "snowflake.fields = 'node=5'",
    ]);
    let id = custom.next_id();
    assert_eq!(
        custom.sql(&format!(
            "SELECT snowflake.field({id}, 'node', 'time:41,node:10,sequence:12')"
        )),
        "5"
    );
}

/// Without the library preloaded there is no shared state: next_id()
/// says how to load it.
#[test]
fn without_preloading_next_id_says_how_to_load_it() {
    let server = Server::new(&[NODE, "shared_preload_libraries = ''"]);
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("shared_preload_libraries"), "{err}");
}

/// One server, one generator, one mark: next_id() issues, and
/// adopt_settings() records, in the database snowflake.database names only,
/// and each says so elsewhere, naming itself.
#[test]
fn next_id_issues_in_the_marks_database_only() {
    let server = Server::new(&[NODE]);
    server.sql("CREATE DATABASE other");
    server
        .psql("postgres", "other", "CREATE EXTENSION snowflake")
        .unwrap();
    for function in ["snowflake.next_id()", "snowflake.adopt_settings()"] {
        let err = server
            .psql("postgres", "other", &format!("SELECT {function}"))
            .unwrap_err();
        assert!(
            err.contains(&format!(
                "{function} works in database 'postgres' only (snowflake.database)"
            )),
            "{err}"
        );
    }
    server.next_id();
}

/// Every node field of the layout must be named: an empty list would
/// issue as node 0, and 'machine=7' under twitter as datacenter 0, the
/// node of every other server given only its machine. Refused, naming the
/// value and what is missing; nothing marked.
#[test]
fn a_node_not_named_in_full_is_refused_naming_the_missing_fields() {
    for (fields, what) in [
        (",", "names no node field"),
        ("machine=7", "leaves out datacenter"),
    ] {
        let server = Server::new(&[&format!("snowflake.fields = '{fields}'")]);
        let err = server.sql_err("SELECT snowflake.next_id()");
        assert_mentions(
            &err,
            &[
                &format!("snowflake.fields = '{fields}' {what}"),
                "set every node field of snowflake.layout = 'twitter': datacenter and machine",
                "datacenter=N,machine=N",
            ],
        );
        assert_eq!(
            server.sql("SELECT last_value IS NULL OR NOT is_called FROM snowflake_internal.mark"),
            "t"
        );
    }
}

/// The mark is written under a layout and a node, and a server restarted
/// under others issues nothing: sonyflake's IDs after twitter's sort below
/// them. Refused, naming both settings and the way on; only the
/// extension's owner may adopt the new ones, and then it issues under
/// them. A changed node alone is refused the same way.
#[test]
fn settings_changed_across_a_restart_are_refused_until_the_owner_adopts_them() {
    let server = Server::new(&[NODE]);
    server.sql("CREATE ROLE app LOGIN; GRANT EXECUTE ON FUNCTION snowflake.next_id() TO app");
    let before = server.next_id();
    server.stop();
    server.configure(&[
        "snowflake.layout = 'sonyflake'",
        "snowflake.fields = 'machine=7'",
    ]);
    server.start().unwrap();
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert_mentions(
        &err,
        &[
            "written under layout twitter",
            "node datacenter=1,machine=7",
            "runs under layout sonyflake",
            "node machine=7",
            "SELECT snowflake.adopt_settings()",
        ],
    );
    let err = server
        .psql("app", "postgres", "SELECT snowflake.adopt_settings()")
        .unwrap_err();
    assert!(err.contains("permission denied"), "{err}");
    let adopted = server.sql("SELECT snowflake.adopt_settings()");
    assert!(adopted.starts_with("layout sonyflake"), "{adopted}");
    let after = server.next_id();
    assert!(after < before, "what was refused: {after} after {before}");
    assert_eq!(
        server.sql(&format!(
            "SELECT snowflake.field({after}, 'machine', 'sonyflake')"
        )),
        "7"
    );

    server.stop();
    server.configure(&["snowflake.fields = 'machine=8'"]);
    server.start().unwrap();
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert_mentions(&err, &["node machine=7", "node machine=8"]);
    // The words are for messages; the fingerprint alone refuses.
    server.sql("DELETE FROM snowflake_internal.settings_text");
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert_mentions(&err, &["words were not kept", "node machine=8"]);
}

use crate::support::{NODE, Server, assert_mentions};

/// next_id() is VOLATILE and PARALLEL UNSAFE, but a function declared
/// PARALLEL SAFE that calls it brings it into a parallel plan, where the
/// mark cannot be written. Refused there every time, not only when a mark
/// write is due (the mark here was just written, so none is).
#[test]
fn next_id_in_a_parallel_operation_is_refused_every_time() {
    let server = Server::new(&[NODE]);
    assert_eq!(
        server.sql(
            "SELECT provolatile, proparallel FROM pg_proc \
             WHERE oid = 'snowflake.next_id()'::regprocedure"
        ),
        "v|u"
    );
    server.sql(
        "CREATE FUNCTION wrapped() RETURNS bigint LANGUAGE sql PARALLEL SAFE \
         AS 'SELECT snowflake.next_id()'",
    );
    server.next_id();
    // force_parallel_mode up to PostgreSQL 15, debug_parallel_query from 16.
    let err = server.sql_err(
        "DO $$ BEGIN SET debug_parallel_query = on; \
         EXCEPTION WHEN undefined_object THEN SET force_parallel_mode = on; END $$; \
         SELECT wrapped()",
    );
    assert_mentions(
        &err,
        &[
            "snowflake.next_id()",
            "parallel operation",
            "PARALLEL UNSAFE",
        ],
    );
    // Outside a parallel plan the same function issues.
    server.sql("SELECT wrapped()");
}

/// A mark set UNLOGGED (by a superuser, by mistake) would be reset by
/// crash recovery, and IDs after a crash could fall below those before:
/// next_id() refuses it, naming the mark and the way back, and issues once
/// it is LOGGED again.
#[test]
fn an_unlogged_mark_is_refused_until_it_is_logged_again() {
    let server = Server::new(&[NODE]);
    server.sql("ALTER SEQUENCE snowflake_internal.mark SET UNLOGGED");
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert_mentions(
        &err,
        &[
            "snowflake_internal.mark",
            "not LOGGED",
            "ALTER SEQUENCE snowflake_internal.mark SET LOGGED",
        ],
    );
    server.sql("ALTER SEQUENCE snowflake_internal.mark SET LOGGED");
    server.next_id();
}

/// The functions take their text arguments as UTF-8: in a database of
/// another encoding CREATE EXTENSION is refused, naming both encodings,
/// rather than its functions failing with an internal error.
#[test]
fn a_database_not_in_utf8_is_refused_at_create_extension() {
    let server = Server::new(&[NODE]);
    for encoding in ["LATIN1", "SQL_ASCII"] {
        let db = encoding.to_lowercase();
        server.sql(&format!(
            "CREATE DATABASE {db} ENCODING '{encoding}' TEMPLATE template0"
        ));
        let err = server
            .psql("postgres", &db, "CREATE EXTENSION snowflake")
            .unwrap_err();
        assert_mentions(&err, &["UTF8", encoding]);
    }
}

use crate::support::{ITEMS, NODE, Server, assert_all_above};

/// Clients insert (committing each row) and select IDs in transactions
/// that never commit; the postmaster and its processes are killed with
/// SIGKILL in the middle. After the restart every new ID is above every
/// ID any client saw, committed or not, and every ID committed.
#[test]
fn kill_9_mid_load_then_every_new_id_is_above_every_id_handed_out() {
    let server = Server::new(&[NODE]);
    server.sql(ITEMS);
    // Mid-load: the uncommitted SELECTs are under way when rows are.
    let highest = server.kill9_mid_load(server.load(true));

    server.start().expect("the server restarts after the crash");
    // A row may have committed whose ID never reached its client: handed
    // out all the same.
    let committed: u64 = server.sql("SELECT max(id) FROM items").parse().unwrap();
    let highest = highest.max(committed);
    let after: Vec<u64> = (0..20).map(|_| server.next_id()).collect();
    assert_all_above(&after, highest, "after a crash");
}

/// The same after a clean stop and start: the first ID after the start is
/// above the last before it.
#[test]
fn a_restart_continues_above() {
    let server = Server::new(&[NODE]);
    let before = server.next_id();
    server.stop();
    server.start().unwrap();
    assert!(server.next_id() > before);
}

/// A logical restore: `pg_dump` keeps the mark (an extension configuration
/// sequence), so a server restored from the dump, even one whose clock is
/// behind, resumes above what the dumped server handed out.
#[test]
fn pg_dump_keeps_the_mark() {
    let source = Server::new(&[NODE]);
    let highest = (0..10).map(|_| source.next_id()).max().unwrap();
    let mark = source.sql("SELECT last_value FROM snowflake_internal.mark");
    let dump = source
        .pg_dump("postgres", "postgres")
        .unwrap_or_else(|err| panic!("{err}"));

    let target = Server::init(&[NODE], &[]);
    target.start().unwrap();
    let restored = target.client("postgres", dump).finish();
    assert!(restored.ok, "{}", restored.stderr);
    assert_eq!(
        target.sql("SELECT last_value FROM snowflake_internal.mark"),
        mark
    );
    // And what the mark was written under, so that the target, under the
    // same settings, issues.
    let written = "SELECT s.last_value, t.settings FROM snowflake_internal.settings s, \
                   snowflake_internal.settings_text t";
    assert_eq!(target.sql(written), source.sql(written));
    assert!(target.next_id() > highest);
}

/// The mark is in a schema that grants nothing to others, so a database
/// owner's pg_dump cannot read it and says so; granted pg_read_all_data,
/// the role dumps it.
#[test]
fn pg_dump_by_a_database_owner_needs_pg_read_all_data() {
    let server = Server::new(&[NODE]);
    server.sql("CREATE ROLE dbowner LOGIN");
    server.sql("CREATE DATABASE owned OWNER dbowner");
    server
        .psql("postgres", "owned", "CREATE EXTENSION snowflake")
        .unwrap();
    let err = server.pg_dump("dbowner", "owned").unwrap_err();
    assert!(
        err.contains("permission denied for schema snowflake_internal"),
        "{err}"
    );
    server.sql("GRANT pg_read_all_data TO dbowner");
    let dump = server
        .pg_dump("dbowner", "owned")
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(dump.contains("setval('snowflake_internal.mark'"), "{dump}");
}

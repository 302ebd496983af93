//! An install of the previous script upgraded by this one: the scripts in
//! `previous/` are what `snowflake sql --generator` printed before issue 25
//! (`--prefix prev -f datacenter=1 -f machine=5`, at commit 339023d). The
//! state is kept, what the previous comment told to grant on it is taken
//! away, its registry table gives way to the view, and a generator of the
//! previous script elsewhere with the same layout and node is refused.

use crate::db::{Db, Place, on_both_servers};

// The checks below, each a test on each server: `postgres::NAME` and
// `mariadb::NAME`.
on_both_servers!(an_install_of_the_previous_script_is_upgraded);

fn previous(db: Db) -> &'static str {
    match db {
        Db::Postgres => include_str!("previous/postgres.sql"),
        Db::Mariadb => include_str!("previous/mysql.sql"),
    }
}

/// The previous scripts' generator.
const ARGS: [&str; 7] = [
    "--prefix",
    "prev",
    "--generator",
    "-f",
    "datacenter=1",
    "-f",
    "machine=5",
];

/// The place and, beside it, another (a schema, or a database its user
/// sees too) where the previous script is installed with the same node.
fn places(db: Db) -> (Place, Place) {
    match db {
        Db::Postgres => {
            let place = db.at("upgrade").fresh();
            (place, place.schema("upgrade_b"))
        }
        Db::Mariadb => {
            let b = db.at("upgrade_b").fresh();
            db.at("upgrade").fresh().shared_with(b, "upgrade_both")
        }
    }
}

fn an_install_of_the_previous_script_is_upgraded(db: Db) {
    let (place, other) = places(db);
    place.run(previous(db)).unwrap();
    other.run(previous(db)).unwrap();
    let before = place.take("prev_next_id", 10);
    if db == Db::Postgres {
        // What the previous comment told to grant.
        place
            .run(
                "DROP ROLE IF EXISTS prev_app;\nCREATE ROLE prev_app LOGIN;\n\
                 GRANT USAGE ON SCHEMA upgrade TO prev_app;\n\
                 GRANT UPDATE ON SEQUENCE prev_next_id_state TO prev_app;",
            )
            .unwrap();
    }
    let script = place.script(&ARGS);
    // The other install has the same layout and node: the two issue the
    // same IDs, and the upgrade says so.
    let err = place.run(&script).unwrap_err();
    assert!(err.contains("generator upgrade_b.prev_next_id"), "{err}");
    other
        .run(match db {
            Db::Postgres => "DROP FUNCTION prev_next_id();",
            Db::Mariadb => "DROP FUNCTION prev_next_id;",
        })
        .unwrap();
    place.run(&script).unwrap();
    let last = before.iter().max().unwrap();
    let after = place.take("prev_next_id", 10);
    assert!(after.iter().all(|id| id > last), "{after:?} after {last}");
    let listed = place
        .run(&format!(
            "SELECT function_name, node_bits FROM snowflake_generators \
             WHERE schema_name = '{}';",
            place.ns
        ))
        .unwrap();
    assert_eq!(listed, format!("prev_next_id\t{}", (1 << 17) | (5 << 12)));
    if db == Db::Postgres {
        let err = place
            .user("prev_app")
            .error_of("SELECT setval('prev_next_id_state', 1);");
        assert!(err.contains("permission denied"), "{err}");
    }
}

//! `<prefix>_next_id()` on real servers: no ID twice under load, rolled
//! back or not; each client's IDs increasing; every ID decoding to the
//! database clock and the node installed; waits at exhaustion and for a
//! clock a little behind, an error for one further behind; the state across
//! restarts and reinstalls; several generators in one database.

use std::time::{Duration, Instant};

use snowflake::{Id, Layout};

use crate::db::{Db, Exclusive, Place, on_both_servers, refusal};
use crate::load::{Load, Taken, Way, assert_no_duplicates};

// The checks below, each a test on each server: `postgres::NAME` and
// `mariadb::NAME`.
on_both_servers!(
    generator_never_repeats_an_id_under_load,
    small_sequence_waits_for_the_next_tick,
    a_statement_reads_the_clock_for_each_id,
    generator_waits_out_a_small_step_back_and_refuses_a_large_one,
    generator_state_survives_restarts,
    several_generators_share_a_database,
    generated_ids_are_what_compose_makes,
    times_outside_the_layout_are_refused,
);

/// The statement load of the issue: 16 clients, 20,000 IDs each.
const CLIENTS: usize = 16;
const IDS_EACH: usize = 20_000;

fn twitter_tick(id: i64) -> i64 {
    id >> 22
}

#[test]
fn bad_generators_are_refused_with_exit_2() {
    // The arguments after `sql`, and what the one line of error must say.
    let cases: [(&[&str], &[&str]); 8] = [
        (
            &["--dialect", "postgres", "--generator"],
            &[
                "generator with no value for datacenter, machine is not allowed",
                "-f NAME=VALUE",
            ],
        ),
        (
            &["--dialect", "mysql", "--generator", "-f", "datacenter=1"],
            &["with no value for machine is"],
        ),
        (
            &[
                "--dialect",
                "mysql",
                "--layout",
                "discord",
                "--generator",
                "-f",
                "worker=1",
            ],
            &["with no value for process is"],
        ),
        (
            &[
                "--dialect",
                "postgres",
                "--layout",
                "time:62,node:1",
                "--generator",
                "-f",
                "node=1",
            ],
            &["has no sequence field"],
        ),
        (
            &["--dialect", "postgres", "-f", "machine=1"],
            &[
                "field machine=1 is not allowed; field values set the node of a generator: add --generator",
            ],
        ),
        (
            &[
                "--dialect",
                "postgres",
                "--generator",
                "--datacenter",
                "1",
                "--machine",
                "32",
            ],
            &["machine 32 is out of range: 0 to 31 (5 bits)"],
        ),
        (
            &[
                "--dialect",
                "mysql",
                "--generator",
                "-f",
                "datacenter=1",
                "-f",
                "machine=1",
                "-f",
                "sequence=3",
            ],
            &["sets the sequence itself"],
        ),
        (
            &[
                "--dialect",
                "mysql",
                "--layout",
                "time:41,next_id:10,sequence:12",
                "--generator",
                "-f",
                "next_id=1",
            ],
            &["field \"next_id\" is not allowed"],
        ),
    ];
    for (args, expected) in cases {
        let err = refusal(args);
        for part in expected {
            assert!(err.contains(part), "{args:?}: {err}");
        }
    }
}

/// The load: 16 clients, each taking 20,000 twitter IDs through
/// SELECT and INSERT ... DEFAULT, one statement in ten rolled back.
fn generator_never_repeats_an_id_under_load(db: Db) {
    let place = db.at("gen_load").fresh();
    place.install("load", &["-f", "datacenter=1", "-f", "machine=7"]);
    let load = Load {
        place,
        function: "load_next_id",
        table: "load_posts",
        clients: CLIENTS,
        ids_each: IDS_EACH,
    };
    load.create_table();
    let taken = load.run();
    load.check(
        &taken,
        &["--layout", "twitter"],
        &[("datacenter", 1), ("machine", 7)],
    );
}

/// Four IDs a millisecond: under the same clients, the sequence runs out
/// all the time and callers wait for the next tick.
const SMALL: &str = "time:41,node:10,sequence:2";

/// Fewer IDs than the full load: at four a millisecond, 16 × 20,000 would
/// take 80 s a server at the very least.
const SMALL_IDS_EACH: usize = 5_000;

fn small_sequence_waits_for_the_next_tick(db: Db) {
    let place = db.at("gen_small").fresh();
    place.install("small", &["--layout", SMALL, "-f", "node=5"]);
    let load = Load {
        place,
        function: "small_next_id",
        table: "small_posts",
        clients: CLIENTS,
        ids_each: SMALL_IDS_EACH,
    };
    load.create_table();
    let taken = load.run();
    load.check(&taken, &["--layout", SMALL], &[("node", 5)]);
    // Never more than four IDs a tick (the sequence never wraps, or IDs
    // would repeat above), so the clients waited for at least this many
    // ticks; and every sequence number was used.
    let layout = Layout::parse(SMALL).unwrap();
    let mut ticks: Vec<u64> = taken
        .iter()
        .flatten()
        .map(|t| layout.decode(Id::new(t.id as u64)).unwrap().time_units())
        .collect();
    ticks.sort_unstable();
    ticks.dedup();
    let total = CLIENTS * SMALL_IDS_EACH;
    assert!(
        ticks.len() >= total / 4,
        "{} ticks for {total} IDs",
        ticks.len()
    );
    let full = taken.iter().flatten().filter(|t| t.id & 3 == 3).count();
    assert!(full > 0, "some ticks used their last sequence number");
}

/// One statement that makes many IDs: were the clock read when the
/// statement began (`now()`), its IDs would all have one time, and past the
/// fourth the generator would wait for a tick that never comes.
fn a_statement_reads_the_clock_for_each_id(db: Db) {
    let place = db.at("gen_statement").fresh();
    place.install("stmt", &["--layout", SMALL, "-f", "node=9"]);
    // Were the clock read once a statement, it would wait for ever: a
    // deadline turns that into an error.
    let select = match db {
        Db::Postgres => {
            "SET statement_timeout = '60s';\nSELECT stmt_next_id() FROM generate_series(1, 1000);"
        }
        Db::Mariadb => {
            "SET STATEMENT max_statement_time = 60 FOR SELECT stmt_next_id() FROM seq_1_to_1000;"
        }
    };
    let (before, ids, after) = place.between_clocks(select);
    assert_eq!(ids.len(), 1000);
    let layout = Layout::parse(SMALL).unwrap();
    let times: Vec<i64> = ids
        .iter()
        .map(|id| layout.decode(Id::new(*id as u64)).unwrap().timestamp_ms())
        .collect();
    for (pair, id) in times.windows(2).zip(ids.windows(2)) {
        assert!(id[0] < id[1] && pair[0] <= pair[1], "{id:?} {pair:?}");
    }
    assert!(
        times[0] >= before && times[999] <= after,
        "{before} {times:?} {after}"
    );
    // 1,000 IDs at four a millisecond span 250 milliseconds at least.
    assert!(times[999] - times[0] >= 249, "{} ms", times[999] - times[0]);
}

/// The statement that sets `prefix`'s state (twitter layout) to the tick
/// of the database clock plus `ahead_ms`, with the sequence number `seq`,
/// and selects that tick: the state of a generator whose clock went back
/// by `ahead_ms` since its last ID.
fn set_ahead(db: Db, prefix: &str, ahead_ms: i64, seq: u64) -> String {
    let clock = db.clock_ms();
    let epoch = Layout::twitter().epoch_ms();
    let tick = format!("({clock} + {ahead_ms} - {epoch})");
    match db {
        Db::Postgres => {
            format!("SELECT setval('{prefix}_next_id_state', ({tick} << 12) | {seq}) >> 12;\n")
        }
        Db::Mariadb => format!(
            "UPDATE {prefix}_next_id_state SET tick = {tick}, seq = {seq};\n\
             SELECT tick FROM {prefix}_next_id_state;\n"
        ),
    }
}

/// The state's tick and sequence number.
fn state_of(place: Place, prefix: &str) -> (i64, i64) {
    match place.db {
        Db::Postgres => {
            let packed: i64 = place
                .one_row(&format!("SELECT last_value FROM {prefix}_next_id_state;"))[0]
                .parse()
                .unwrap();
            (packed >> 12, packed & 4095)
        }
        Db::Mariadb => {
            let row = place.one_row(&format!("SELECT tick, seq FROM {prefix}_next_id_state;"));
            (row[0].parse().unwrap(), row[1].parse().unwrap())
        }
    }
}

/// Sets the state ahead as [`set_ahead`] does, then reads the clock, takes
/// an ID and reads the clock again, all in one call to the server, so that
/// the clock has moved on as little as can be: the state's tick, the clocks
/// and the ID.
fn call_ahead(place: Place, prefix: &str, ahead_ms: i64, seq: u64) -> Result<[i64; 4], String> {
    let clock = place.db.clock_ms();
    let epoch = Layout::twitter().epoch_ms();
    let sql = match place.db {
        // A select list is evaluated in order.
        Db::Postgres => format!(
            "SELECT setval('{prefix}_next_id_state', (({clock} + {ahead_ms} - {epoch}) << 12) | {seq}) >> 12, \
             {clock}, {prefix}_next_id(), {clock};"
        ),
        Db::Mariadb => format!(
            "DROP PROCEDURE IF EXISTS {prefix}_ahead;\n\
             DELIMITER //\n\
             CREATE PROCEDURE {prefix}_ahead()\n\
             BEGIN\n\
             \x20 UPDATE {prefix}_next_id_state SET tick = {clock} + {ahead_ms} - {epoch}, seq = {seq};\n\
             \x20 SELECT tick INTO @tick FROM {prefix}_next_id_state;\n\
             \x20 SELECT @tick, {clock}, {prefix}_next_id(), {clock};\n\
             END//\n\
             DELIMITER ;\n\
             CALL {prefix}_ahead();\n"
        ),
    };
    let out = place.run(&sql)?;
    let v: Vec<i64> = out.trim().split('\t').map(|n| n.parse().unwrap()).collect();
    Ok([v[0], v[1], v[2], v[3]])
}

/// How many milliseconds the generator's refusal `err` says the clock went
/// back by.
fn went_backwards_by(err: &str) -> i64 {
    err.split("went backwards by ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"))
}

fn generator_waits_out_a_small_step_back_and_refuses_a_large_one(db: Db) {
    let place = db.at("gen_clock").fresh();
    let node = ["-f", "datacenter=2", "-f", "machine=3"];
    place.install("clk", &node);
    let twitter = Layout::twitter();
    let time_of = |id: i64| twitter.decode(Id::new(id as u64)).unwrap().timestamp_ms();
    let epoch = twitter.epoch_ms();

    // 3 ms back, within the tolerance: no error, and no ID ahead of the
    // clock: the call waits for the last ID's tick and issues in it (or
    // later, if the clock got there by itself first).
    // The scene needs the clock still behind the state when the ID is
    // asked for; on a busy machine the milliseconds between setting the
    // state and asking can use the lead up, so a scene that did not come
    // about is set again (the ID it issued is checked all the same).
    for (ahead, seq, first) in [(3, 0, (0, 1)), (2, 4095, (1, 0))] {
        let mut scenes = 0;
        loop {
            let [tick, before, id, after] = call_ahead(place, "clk", ahead, seq).unwrap();
            let issued = (twitter_tick(id) - tick, id & 4095);
            assert!(
                issued == first || issued.0 > first.0,
                "{issued:?} after the state ({tick}, {seq})"
            );
            assert!(time_of(id) <= after, "{id} is ahead of the clock, {after}");
            if before < epoch + tick {
                break;
            }
            scenes += 1;
            assert!(
                scenes < 50,
                "the clock never stayed behind a state {ahead} ms ahead of it"
            );
        }
    }

    // 10 s back: an error that says by how much, and the state as it was.
    let err = call_ahead(place, "clk", 10_000, 17).unwrap_err();
    let by = went_backwards_by(&err);
    assert!((9_000..=10_000).contains(&by), "{err}");
    assert!(
        err.contains("ms, more than the 5 ms tolerated") && err.contains("clk_next_id"),
        "{err}"
    );
    let (ahead_tick, seq) = state_of(place, "clk");
    assert_eq!(seq, 17, "nothing was issued");
    // Installing again keeps the state, however long the install waits for
    // other tests' locks on a shared server: still refused while the clock
    // is behind it, and above it once the clock has passed it.
    place.install("clk", &node);
    assert_eq!(state_of(place, "clk"), (ahead_tick, 17), "installed again");
    match place.run("SELECT clk_next_id();") {
        Err(err) => {
            assert!(err.contains("went backwards by"), "{err}");
            assert_eq!(state_of(place, "clk"), (ahead_tick, 17));
        }
        Ok(id) => {
            let id: i64 = id.parse().unwrap();
            let issued = (twitter_tick(id), id & 4095);
            assert!(
                issued > (ahead_tick, 17),
                "{issued:?} not after the state it was installed over"
            );
        }
    }

    // 2 s back: refused until the clock has caught up, then the next ID
    // after the state.
    let state = call_ahead(place, "clk", 2_000, 100);
    assert!(state.is_err(), "{state:?}");
    let (tick, _) = state_of(place, "clk");
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        match place.run("SELECT clk_next_id();") {
            Ok(id) => break id.parse::<i64>().unwrap(),
            Err(err) if err.contains("went backwards by") && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(err) => panic!("{err}"),
        }
    };
    assert!(id > ((tick << 22) | 100), "{id} after tick {tick}");
    assert!(time_of(id) >= epoch + tick);
}

fn generator_state_survives_restarts(db: Db) {
    let place = db.at("gen_restart").fresh();
    place.install("rst", &["-f", "datacenter=3", "-f", "machine=1"]);
    let mut before = place.take("rst_next_id", 100);
    for how in ["clean", "crash"] {
        db.restart(how);
        let after = place.take("rst_next_id", 100);
        let last = *before.iter().max().unwrap();
        assert!(
            after.iter().all(|id| *id > last),
            "after a {how} restart: {after:?} not above {last}"
        );
        before = after;
    }
    // The state itself is what survives, not just the clock's lead: a
    // state a minute ahead is still a minute ahead after a crash.
    place.run(&set_ahead(db, "rst", 60_000, 0)).unwrap();
    db.restart("crash");
    let err = place.error_of("SELECT rst_next_id();");
    let by = went_backwards_by(&err);
    assert!((30_000..=60_000).contains(&by), "{err}");
}

fn several_generators_share_a_database(db: Db) {
    let place = db.at("gen_multi").fresh();
    place.install("gen_a", &["-f", "datacenter=0", "-f", "machine=1"]);
    place.install("gen_b", &["-f", "datacenter=0", "-f", "machine=2"]);
    let loads = [("gen_a", "posts_a"), ("gen_b", "posts_b")].map(|(prefix, table)| Load {
        place,
        function: if prefix == "gen_a" {
            "gen_a_next_id"
        } else {
            "gen_b_next_id"
        },
        table,
        clients: CLIENTS / 2,
        ids_each: 2_000,
    });
    for load in &loads {
        load.create_table();
    }
    let taken: Vec<Vec<Vec<Taken>>> = std::thread::scope(|scope| {
        let running: Vec<_> = loads.iter().map(|l| scope.spawn(|| l.run())).collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (machine, (load, taken)) in loads.iter().zip(&taken).enumerate() {
        load.check(
            taken,
            &["--layout", "twitter"],
            &[("datacenter", 0), ("machine", machine as u64 + 1)],
        );
    }
    let all: Vec<Taken> = taken.iter().flatten().flatten().copied().collect();
    assert_no_duplicates(&all);
    assert!(all.iter().any(|t| t.way == Way::Insert));

    // A third with the first one's node would issue its IDs: refused, and
    // nothing of it is installed.
    let err = place
        .try_install("gen_c", &["-f", "datacenter=0", "-f", "machine=1"])
        .unwrap_err();
    assert!(err.contains("generator gen_multi.gen_a_next_id"), "{err}");
    assert!(place.run("SELECT gen_c_next_id();").is_err());
    // Installing one again with its own node is fine; with another layout,
    // its state would mean nothing: refused.
    place.install("gen_a", &["-f", "datacenter=0", "-f", "machine=1"]);
    let last = all.iter().map(|t| t.id).max().unwrap();
    assert!(place.take("gen_a_next_id", 10).iter().all(|id| *id > last));
    let discord = ["--layout", "discord", "-f", "worker=1", "-f", "process=1"];
    let err = place.try_install("gen_a", &discord).unwrap_err();
    assert!(
        err.contains("prefix gen_a has a generator of another layout"),
        "{err}"
    );
    let listed = place.run(
        "SELECT function_name, node_bits FROM snowflake_generators \
         WHERE schema_name = 'gen_multi' ORDER BY function_name;",
    );
    assert_eq!(
        listed.unwrap(),
        format!("gen_a_next_id\t{}\ngen_b_next_id\t{}", 1 << 12, 2 << 12)
    );

    if db == Db::Postgres {
        another_schema_another_generator(place);
    }
}

/// In PostgreSQL the same prefix in another schema of the database is
/// another generator: each function keeps the schema it was installed in,
/// whatever the caller's search_path.
fn another_schema_another_generator(place: Place) {
    place
        .schema("gen_multi_other")
        .install("gen_a", &["-f", "datacenter=0", "-f", "machine=3"]);
    let out = place
        .schema("public")
        .one_row("SELECT gen_multi.gen_a_next_id(), gen_multi_other.gen_a_next_id();");
    let machines: Vec<u64> = out
        .iter()
        .map(|id| (id.parse::<u64>().unwrap() >> 12) & 31)
        .collect();
    assert_eq!(machines, [1, 3]);
}

/// Layouts other than twitter's: another tick and field order (sonyflake:
/// 10 ms, the machine below the sequence), 64 bits (discord). The
/// generator's IDs are what the read functions, checked against the shared
/// vectors, compose from their parts.
fn generated_ids_are_what_compose_makes(db: Db) {
    let place = db.at("gen_layouts").fresh();
    for (prefix, layout, node) in [
        (
            "tw",
            "twitter",
            // Sonyflake's machine field (bits 0 to 15) overlaps twitter's
            // (12 to 16) in bits 12 to 15: here they differ (14 and 15),
            // or the second install would be refused.
            &["-f", "datacenter=31", "-f", "machine=30"][..],
        ),
        ("sony", "sonyflake", &["-f", "machine=65535"][..]),
        (
            "disc",
            "discord",
            &["-f", "worker=5", "-f", "process=9"][..],
        ),
    ] {
        let mut args = vec!["--layout", layout];
        args.extend_from_slice(node);
        place.install(prefix, &args);
        let (before, ids, after) =
            place.between_clocks(&format!("SELECT {prefix}_next_id() FROM {};", db.rows(50)));
        assert_eq!(ids.len(), 50, "{layout}");
        let core = Layout::preset(layout).unwrap();
        let fields: Vec<&str> = core.fields().iter().map(|f| f.name()).collect();
        for id in &ids {
            let d = core.decode(Id::new(*id as u64)).unwrap();
            // A tick of 10 ms starts up to 9 ms before the clock read.
            assert!(
                d.timestamp_ms() >= before - 9 && d.timestamp_ms() <= after,
                "{layout} {id}: {} not within {before} to {after}",
                d.timestamp_ms()
            );
            for pair in node.chunks(2) {
                let (name, value) = pair[1].split_once('=').unwrap();
                assert_eq!(d.field(name), Some(value.parse().unwrap()), "{layout} {id}");
            }
            let parts: Vec<String> = fields
                .iter()
                .map(|f| format!("{prefix}_{f}({id})"))
                .collect();
            let again = place.one_row(&format!(
                "SELECT {prefix}_compose({prefix}_time({id}), {});",
                parts.join(", ")
            ));
            assert_eq!(again, [id.to_string()], "{layout}");
        }
    }
}

/// A layout whose epoch is still to come, and one whose 20 bits of
/// milliseconds from 2020 ended 17 minutes later: no IDs, and the error
/// says why. Each in a database of its own: the short one's node field
/// fixes bits that twitter's leaves to the sequence, so the two could
/// issue one ID.
fn times_outside_the_layout_are_refused(db: Db) {
    for (ns, prefix, args, said) in [
        (
            "gen_range",
            "future",
            &[
                "--epoch",
                "2100-01-01T00:00:00Z",
                "-f",
                "datacenter=0",
                "-f",
                "machine=0",
            ][..],
            "before the layout's epoch, 2100-01-01T00:00:00.000Z",
        ),
        (
            "gen_range_short",
            "short",
            &[
                "--layout",
                "time:20,node:2,sequence:4",
                "--epoch",
                "2020-01-01T00:00:00Z",
                "-f",
                "node=1",
            ],
            "IDs of this layout ran out at 2020-01-01T00:17:28.575Z",
        ),
    ] {
        let place = db.at(ns).fresh();
        place.install(prefix, args);
        let err = place.error_of(&format!("SELECT {prefix}_next_id();"));
        assert!(err.contains(said), "{err}");
    }
}

/// A server that reads SYSDATE() once a statement, as NOW() (MariaDB's
/// --sysdate-is-now), would leave a statement that waits for the next tick
/// waiting for ever: the generator says why instead.
#[test]
#[ignore = "needs MariaDB: run scripts/sql-test"]
fn mariadb_generator_refuses_a_clock_that_does_not_move() {
    let place = Db::Mariadb.at("gen_sysdate").fresh();
    place.install("frozen", &["--layout", SMALL, "-f", "node=1"]);
    let alone = Exclusive::take();
    alone.restart(Db::Mariadb, "clean", &["--sysdate-is-now"]);
    // Four IDs a tick: the fifth waits for the next.
    // A deadline, should the generator wait for ever.
    let result = alone.run(
        place,
        "SET STATEMENT max_statement_time = 10 FOR SELECT frozen_next_id() FROM seq_1_to_5;",
    );
    alone.restart(Db::Mariadb, "clean", &[]);
    let err = result.unwrap_err();
    assert!(
        err.contains("SYSDATE() did not move while frozen_next_id waited"),
        "{err}"
    );
    assert!(err.contains("--sysdate-is-now"), "{err}");
}

/// The lock callers take turns under is let go as the call returns, not at
/// the caller's commit (which would make whole transactions take turns):
/// after a call inside a transaction, and after a call cancelled while it
/// waits (a statement timeout, a client that gives up), which would
/// otherwise leave every other caller waiting.
#[test]
#[ignore = "needs PostgreSQL: run scripts/sql-test"]
fn postgres_a_call_lets_go_of_the_lock_as_it_returns() {
    let place = Db::Postgres.at("gen_cancel").fresh();
    place.install("cancel", &["--layout", SMALL, "-f", "node=2"]);
    let held = "SELECT count(*) FROM pg_locks \
                WHERE relation = 'cancel_next_id_lock'::regclass AND pid = pg_backend_pid();";
    let out = place.run(&format!(
        "BEGIN;\nSELECT cancel_next_id() > 0;\n{held}\nCOMMIT;\n\
         SET statement_timeout = '200ms';\n\
         DO $$ BEGIN PERFORM cancel_next_id() FROM generate_series(1, 100000); \
         EXCEPTION WHEN query_canceled THEN RAISE NOTICE 'cancelled'; END $$;\n\
         RESET statement_timeout;\n\
         {held}\n\
         SELECT cancel_next_id() > 0;"
    ));
    assert_eq!(out.unwrap(), "t\n0\n0\nt");
}

//! `snowflake sql --partitions`: bad input refused in one line; on real
//! servers, rows land in the partition of their time, around a summer-time
//! change, across a year's end, and from the generator.

use crate::db::{Db, Place, on_both_servers, refusal};

// The checks below, each a test on each server: `postgres::NAME` and
// `mariadb::NAME`.
on_both_servers!(
    rows_land_in_the_partition_of_their_time,
    generated_rows_land_in_the_partition_of_their_day,
);

#[test]
fn bad_partitions_are_refused_with_exit_2() {
    let base = ["--dialect", "postgres", "--partitions", "posts"];
    let with = |more: &[&str]| -> String {
        let mut args = base.to_vec();
        args.extend_from_slice(more);
        refusal(&args)
    };
    // A period from, to and every, then `more`.
    let period = |from: &str, to: &str, every: &str, more: &[&str]| -> String {
        with(&[&["--from", from, "--to", to, "--every", every], more].concat())
    };
    let err = period("2025-02-01", "2025-01-01", "day", &[]);
    assert!(
        err.contains("from 2025-02-01 (after --to 2025-01-01) is not allowed"),
        "{err}"
    );
    let err = period("2025-01-01", "2025-02-01", "year", &[]);
    assert!(
        err.contains("'year'") && err.contains("day, week, month"),
        "{err}"
    );
    let err = period(
        "2025-01-01",
        "2025-02-01",
        "day",
        &["--time-zone", "Mars/Olympus"],
    );
    assert!(
        err.contains("'Mars/Olympus'") && err.contains("IANA name such as Europe/Berlin"),
        "{err}"
    );
    for bad in ["2025-13-01", "2025-1-1", "yesterday", "2025-02-30"] {
        let err = period(bad, "2025-02-01", "day", &[]);
        assert!(
            err.contains(&format!("'{bad}'")) && err.contains("a date is YYYY-MM-DD"),
            "{err}"
        );
    }
    let err = with(&["--from", "2025-01-01", "--every", "day"]);
    assert!(err.contains("--to"), "{err}");
    // A generator's script and partitions are two scripts.
    let err = period("2025-01-01", "2025-01-02", "day", &["--generator"]);
    assert!(
        err.contains("--generator") && err.contains("--partitions"),
        "{err}"
    );
    let err = refusal(&[
        "--dialect",
        "postgres",
        "--partitions",
        "posts; DROP TABLE x",
        "--from",
        "2025-01-01",
        "--to",
        "2025-01-02",
        "--every",
        "day",
    ]);
    assert!(
        err.contains("partitions \"posts; DROP TABLE x\" is not allowed"),
        "{err}"
    );
    for alone in [
        ["--from", "2025-01-01"],
        ["--time-zone", "UTC"],
        ["--every", "day"],
    ] {
        let mut args = vec!["--dialect", "postgres"];
        args.extend_from_slice(&alone);
        let err = refusal(&args);
        assert!(err.contains("--partitions"), "{err}");
    }
    let err = period("2025-01-01", "2025-01-02", "day", &["--prefix", "x"]);
    assert!(err.contains("--prefix"), "{err}");
}

/// Where a row goes: a period's partition by its suffix, the partition of
/// IDs before the first period (MariaDB's p_before; PostgreSQL has none), or
/// none at all.
#[derive(Debug, Clone, Copy)]
enum Lands<'a> {
    In(&'a str),
    Before,
    Refused,
}

/// The partition's name as the database reports it.
fn partition_name(db: Db, table: &str, lands: Lands) -> Option<String> {
    match (db, lands) {
        (Db::Postgres, Lands::In(suffix)) => Some(format!("{table}_p{suffix}")),
        (Db::Mariadb, Lands::In(suffix)) => Some(format!("p{suffix}")),
        (Db::Mariadb, Lands::Before) => Some("p_before".to_owned()),
        (Db::Postgres, Lands::Before) | (_, Lands::Refused) => None,
    }
}

/// A period's edge: where one period ends and the next begins.
#[derive(Debug, Clone, Copy)]
struct Edge<'a> {
    /// When the later period begins, UTC.
    at: &'a str,
    /// Where the last ID before it goes: the largest ID of the tick before.
    before: Lands<'a>,
    /// Where the first ID from it goes: the smallest ID of its tick.
    from: Lands<'a>,
}

/// At each edge, inserts the last ID before it and the first ID from it,
/// made by the read functions (`pt`, twitter's layout), and checks the
/// partition each went to. A bound one ID off puts one of the two in the
/// wrong partition; IDs of other sequence numbers would not see it.
fn check_edges(place: Place, table: &str, edges: &[Edge]) {
    let db = place.db;
    // The largest values of the fields below the time: the tick's last ID.
    let last: Vec<String> = snowflake::Layout::twitter()
        .fields()
        .iter()
        .map(|f| f.max().to_string())
        .collect();
    let last = last.join(", ");
    for edge in edges {
        let (at, before) = match db {
            Db::Postgres => (
                format!("timestamptz '{}+00'", edge.at),
                format!("timestamptz '{}+00' - interval '1 millisecond'", edge.at),
            ),
            Db::Mariadb => (
                format!("TIMESTAMP'{}'", edge.at),
                format!("TIMESTAMP'{}' - INTERVAL 1000 MICROSECOND", edge.at),
            ),
        };
        for (label, id, lands) in [
            (
                format!("{} last before", edge.at),
                format!("pt_compose({before}, {last})"),
                edge.before,
            ),
            (
                format!("{} first", edge.at),
                format!("pt_compose({at}, 0, 0, 0)"),
                edge.from,
            ),
        ] {
            let insert = format!("INSERT INTO {table} (id, label) VALUES ({id}, '{label}');");
            let want = partition_name(db, table, lands);
            match (place.run(&insert), &want) {
                (Ok(_), Some(want)) => {
                    assert_eq!(
                        &partition_of(place, table, &label),
                        want,
                        "the row of {label}"
                    );
                }
                (Err(err), None) => {
                    let refused = match db {
                        Db::Postgres => "no partition of relation",
                        Db::Mariadb => "no partition for value",
                    };
                    assert!(err.contains(refused), "{label}: {err}");
                }
                (got, want) => panic!("the row of {label}: {got:?}, wanted {want:?}"),
            }
        }
    }
}

/// The partition that holds the row labelled `label`.
fn partition_of(place: Place, table: &str, label: &str) -> String {
    match place.db {
        Db::Postgres => place.one_row(&format!(
            "SELECT tableoid::regclass FROM {table} WHERE label = '{label}';"
        ))[0]
            .clone(),
        // MariaDB names no partition of a row: ask each.
        Db::Mariadb => {
            let names = place
                .run(&format!(
                    "SELECT PARTITION_NAME FROM information_schema.PARTITIONS \
                     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}';"
                ))
                .unwrap();
            let holding: Vec<&str> = names
                .lines()
                .filter(|name| {
                    place
                        .run(&format!(
                            "SELECT COUNT(*) FROM {table} PARTITION ({name}) WHERE label = '{label}';"
                        ))
                        .unwrap()
                        == "1"
                })
                .collect();
            assert_eq!(holding.len(), 1, "{label} is in {holding:?}");
            holding[0].to_owned()
        }
    }
}

/// Loads the partitions of `table`, one a period of `every` from `from` to
/// `to`, with `more` arguments.
fn load_partitions(place: Place, table: &str, from: &str, to: &str, every: &str, more: &[&str]) {
    let period = [
        "--partitions",
        table,
        "--from",
        from,
        "--to",
        to,
        "--every",
        every,
    ];
    place.load(&[&period[..], more].concat());
}

fn rows_land_in_the_partition_of_their_time(db: Db) {
    let place = db.at("parts").fresh();
    place.load(&["--prefix", "pt"]);
    let create = |table: &str| match db {
        Db::Postgres => format!(
            "CREATE TABLE {table} (id bigint NOT NULL, label text) PARTITION BY RANGE (id);"
        ),
        Db::Mariadb => {
            format!("CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY, label VARCHAR(60));")
        }
    };

    // Days in New York around the start of summer time: 2025-03-09 has 23
    // hours, from 05:00 to 04:00 the next day in UTC.
    place.run(&create("events")).unwrap();
    load_partitions(
        place,
        "events",
        "2025-03-08",
        "2025-03-10",
        "day",
        &["--time-zone", "America/New_York"],
    );
    let day = |suffix| Lands::In(suffix);
    check_edges(
        place,
        "events",
        &[
            Edge {
                at: "2025-03-08 05:00:00.000",
                before: Lands::Before,
                from: day("20250308"),
            },
            // Within the 8th: midday is no edge, both IDs are the 8th's.
            Edge {
                at: "2025-03-08 17:00:00.000",
                before: day("20250308"),
                from: day("20250308"),
            },
            Edge {
                at: "2025-03-09 05:00:00.000",
                before: day("20250308"),
                from: day("20250309"),
            },
            // The 9th had 23 hours.
            Edge {
                at: "2025-03-10 04:00:00.000",
                before: day("20250309"),
                from: day("20250310"),
            },
            Edge {
                at: "2025-03-11 04:00:00.000",
                before: day("20250310"),
                from: Lands::Refused,
            },
        ],
    );

    // Months in UTC across the year's end, from a day in the middle of one.
    place.run(&create("monthly")).unwrap();
    load_partitions(place, "monthly", "2024-12-15", "2025-02-01", "month", &[]);
    check_edges(
        place,
        "monthly",
        &[
            Edge {
                at: "2024-12-01 00:00:00.000",
                before: Lands::Before,
                from: Lands::In("202412"),
            },
            Edge {
                at: "2025-01-01 00:00:00.000",
                before: Lands::In("202412"),
                from: Lands::In("202501"),
            },
            Edge {
                at: "2025-02-01 00:00:00.000",
                before: Lands::In("202501"),
                from: Lands::In("202502"),
            },
            Edge {
                at: "2025-03-01 00:00:00.000",
                before: Lands::In("202502"),
                from: Lands::Refused,
            },
        ],
    );

    if db == Db::Postgres {
        again_with_a_later_end(place);
    }
}

/// PostgreSQL's script run again with a later --to: the partitions there
/// are kept, with their rows, and the new periods added.
fn again_with_a_later_end(place: Place) {
    load_partitions(
        place,
        "events",
        "2025-03-08",
        "2025-03-12",
        "day",
        &["--time-zone", "America/New_York"],
    );
    let got = place.one_row(
        "SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass), \
         (SELECT count(*) FROM events);",
    );
    assert_eq!(got, ["5", "8"]);
}

/// IDs from the generator go to the partition of the day they were made.
fn generated_rows_land_in_the_partition_of_their_day(db: Db) {
    let place = db.at("parts_live").fresh();
    place.install("live", &["-f", "datacenter=4", "-f", "machine=4"]);
    let today = place.one_row(&format!(
        "SELECT {};",
        match db {
            Db::Postgres => "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
            Db::Mariadb => "DATE(UTC_TIMESTAMP())",
        }
    ))[0]
        .clone();
    let today: jiff::civil::Date = today.parse().unwrap();
    let from = today.yesterday().unwrap().to_string();
    let to = today.tomorrow().unwrap().to_string();
    let table = match db {
        Db::Postgres => {
            "CREATE TABLE live_rows (id bigint NOT NULL DEFAULT live_next_id(), n int) \
             PARTITION BY RANGE (id);"
        }
        Db::Mariadb => {
            "CREATE TABLE live_rows (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, n INT);\n\
             CREATE TRIGGER live_rows_id BEFORE INSERT ON live_rows FOR EACH ROW \
             SET NEW.id = IF(NEW.id = 0, live_next_id(), NEW.id);"
        }
    };
    place.run(table).unwrap();
    load_partitions(place, "live_rows", &from, &to, "day", &[]);
    place
        .run("INSERT INTO live_rows (n) VALUES (1), (2), (3);")
        .unwrap();
    let rows = place
        .run(match db {
            Db::Postgres => {
                "SELECT id, to_char(live_time(id) AT TIME ZONE 'UTC', 'YYYYMMDD') FROM live_rows;"
            }
            Db::Mariadb => "SELECT id, DATE_FORMAT(live_time(id), '%Y%m%d') FROM live_rows;",
        })
        .unwrap();
    assert_eq!(rows.lines().count(), 3);
    for row in rows.lines() {
        let (id, day) = row.split_once('\t').unwrap();
        let lands = Lands::In(day);
        let want = partition_name(db, "live_rows", lands).unwrap();
        let here = match db {
            Db::Postgres => format!("SELECT count(*) FROM {want} WHERE id = {id};"),
            Db::Mariadb => {
                format!("SELECT COUNT(*) FROM live_rows PARTITION ({want}) WHERE id = {id};")
            }
        };
        assert_eq!(place.run(&here).unwrap(), "1", "{id} of {day} in {want}");
    }
}

//! The read functions (time, fields, compose, min_id, max_id): every preset
//! and custom layouts against every compose case of testdata/vectors.json,
//! whose IDs were computed apart from this code; their errors, and their
//! purity.

use serde_json::Value;
use snowflake::Layout;

use crate::db::{Db, on_both_servers, refusal, sql_of, utc_text};

// The checks below, each a test on each server: `postgres::NAME` and
// `mariadb::NAME`.
on_both_servers!(
    functions_read_the_vectors_readings,
    functions_match_the_vectors,
    functions_refuse_bad_values,
);

/// DATETIME's last millisecond, 9999-12-31 23:59:59.999, in Unix ms.
const DATETIME_MAX_MS: i64 = 253_402_300_799_999;

#[test]
fn bad_input_is_refused_with_exit_2() {
    let err = refusal(&["--dialect", "postgres", "--prefix", "drop table"]);
    assert!(
        err.contains("prefix \"drop table\" is not allowed"),
        "{err}"
    );
    assert!(
        err.contains("letters, digits and _, starting with a letter"),
        "{err}"
    );
    let err = refusal(&[
        "--dialect",
        "mysql",
        "--layout",
        "time:41,compose:10,sequence:12",
    ]);
    assert!(err.contains("field \"compose\" is not allowed"), "{err}");
    let err = refusal(&["--dialect", "oracle"]);
    assert!(
        err.contains("oracle") && err.contains("postgres, mysql"),
        "{err}"
    );
    let err = refusal(&["--layout", "twitter"]);
    assert!(err.contains("--dialect"), "{err}");
    let err = refusal(&["--dialect", "postgres", "--layout", "flickr"]);
    assert!(err.contains("unknown layout \"flickr\""), "{err}");
}

#[test]
fn prefixes_name_the_functions() {
    let sql = sql_of(&["--dialect", "postgres", "--layout", "discord"]);
    for name in [
        "discord_time(id bigint)",
        "discord_worker(id bigint)",
        "discord_min_id(ts",
    ] {
        assert!(sql.contains(name), "{name}");
    }
    let sql = sql_of(&["--dialect", "mysql", "--prefix", "posts"]);
    assert!(sql.contains("CREATE FUNCTION posts_machine(id BIGINT)"));
    assert!(!sql.contains("twitter_"));
    // A preset moved to another epoch is not the preset any more.
    let sql = sql_of(&["--dialect", "postgres", "--epoch", "0"]);
    assert!(sql.contains("FUNCTION snowflake_time(id bigint)"));
}

fn compose_cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/vectors.json");
    let text = std::fs::read_to_string(path).unwrap();
    let vectors: Value = serde_json::from_str(&text).unwrap();
    vectors["compose"].as_array().unwrap().clone()
}

/// The command-line arguments and the core layout of a vector's layout.
fn layout_of(case: &Value) -> (Vec<String>, Layout) {
    let name = case["layout"].as_str().unwrap();
    let mut args = vec!["--layout".to_owned(), name.to_owned()];
    let mut layout = Layout::parse(name).unwrap();
    if let Some(epoch) = case.get("epoch_ms").and_then(Value::as_i64) {
        args.extend(["--epoch".to_owned(), epoch.to_string()]);
        layout = layout.with_epoch_ms(epoch).unwrap();
    }
    if let Some(tick) = case.get("tick_ms").and_then(Value::as_u64) {
        args.extend(["--tick-ms".to_owned(), tick.to_string()]);
        layout = layout.with_tick_ms(tick).unwrap();
    }
    (args, layout)
}

fn functions_match_the_vectors(db: Db) {
    let cases = compose_cases();
    let mut loaded: Vec<Vec<String>> = Vec::new();
    let mut checked = 0;
    let mut presets = std::collections::BTreeSet::new();
    for case in &cases {
        let (mut args, layout) = layout_of(case);
        let preset = Layout::preset(&layout.name()).filter(|p| *p == layout);
        if let Some(p) = &preset {
            presets.insert(p.name().into_owned());
        }
        // Custom layouts each get a prefix of their own: under the default
        // one, two custom layouts would replace each other's functions.
        let known = loaded.iter().position(|a| *a == args);
        let index = known.unwrap_or(loaded.len());
        if known.is_none() {
            loaded.push(args.clone());
        }
        let prefix = preset
            .as_ref()
            .map_or(format!("custom{index}"), |p| p.name().into_owned());
        if preset.is_none() {
            args.extend(["--prefix".to_owned(), prefix.clone()]);
        }
        if known.is_none() {
            db.load(&args.iter().map(String::as_str).collect::<Vec<_>>());
        }
        check_case(db, &prefix, &layout, case);
        checked += 1;
    }
    assert_eq!(checked, cases.len());
    assert_eq!(
        presets.len(),
        snowflake::Layout::PRESETS.len(),
        "every preset: {presets:?}"
    );
    assert!(
        loaded.len() > presets.len(),
        "a custom layout besides the presets"
    );
}

fn check_case(db: Db, prefix: &str, layout: &Layout, case: &Value) {
    let what = format!("{db:?}, {case}");
    let unsigned: u64 = case["id"].as_str().unwrap().parse().unwrap();
    // The mapping the functions' comment states: two's complement.
    let id = unsigned as i64;
    let ts = case["timestamp_ms"].as_i64().unwrap();
    let values: Vec<(String, u64)> = layout
        .fields()
        .iter()
        .map(|f| {
            (
                f.name().to_owned(),
                case["fields"][f.name()].as_u64().unwrap(),
            )
        })
        .collect();

    let reads: Vec<String> = values
        .iter()
        .map(|(name, _)| format!("{prefix}_{name}({id})"))
        .collect();
    let got = db.one_row(&format!("SELECT {};", reads.join(", ")));
    let expected: Vec<String> = values.iter().map(|(_, v)| v.to_string()).collect();
    assert_eq!(got, expected, "fields of {what}");

    let time = format!("SELECT {};", db.time_text(&format!("{prefix}_time({id})")));
    if db == Db::Mariadb && ts > DATETIME_MAX_MS {
        // DATETIME ends with the year 9999: the time cannot be read, and
        // there is no DATETIME to compose from.
        let err = db.error_of(&time);
        assert!(err.contains("which DATETIME cannot hold"), "{what}: {err}");
        assert!(
            err.contains(&format!("id {id} is from Unix ms {ts}")),
            "{what}: {err}"
        );
        return;
    }
    assert_eq!(db.one_row(&time), [utc_text(ts)], "time of {what}");

    let at = db.time(ts);
    let args: Vec<String> = values.iter().map(|(_, v)| v.to_string()).collect();
    let got = db.one_row(&format!(
        "SELECT {prefix}_compose({at}, {}), {prefix}_min_id({at}), {prefix}_max_id({at});",
        args.join(", ")
    ));
    assert_eq!(got[0], id.to_string(), "compose of {what}");
    let min = got[1].parse::<i64>().unwrap() as u64;
    let max = got[2].parse::<i64>().unwrap() as u64;
    let low = (1u64 << layout.time_shift()) - 1;
    assert!(min <= unsigned && unsigned <= max, "{min} to {max}: {what}");
    assert_eq!(
        min & !low,
        unsigned & !low,
        "min_id in the ID's tick: {what}"
    );
    assert_eq!(min & low, 0, "min_id: {what}");
    assert_eq!(
        max & !low,
        unsigned & !low,
        "max_id in the ID's tick: {what}"
    );
    assert_eq!(max & low, low, "max_id: {what}");
}

/// Errors name the value and what is allowed; NULL gives NULL.
fn functions_refuse_bad_values(db: Db) {
    db.load(&["--prefix", "err"]);
    let at = db.time(1_700_000_000_000);
    // A call, and what its error must say.
    for (call, says) in [
        (
            "err_time(-5)".to_owned(),
            "id -5 is negative, but the layout keeps its sign bit 0",
        ),
        ("err_machine(-1)".to_owned(), "id -1 is negative"),
        (
            format!("err_compose({at}, 1, 32, 0)"),
            "machine 32 is out of range 0 to 31 (5 bits)",
        ),
        (
            format!("err_compose({at}, -1, 0, 0)"),
            "datacenter -1 is out of range 0 to 31 (5 bits)",
        ),
        (
            format!("err_compose({at}, 0, 0, 4096)"),
            "sequence 4096 is out of range 0 to 4095 (12 bits)",
        ),
    ] {
        let err = db.error_of(&format!("SELECT {call};"));
        assert!(err.contains(says), "{call}: {err}");
    }
    let before = db.time(1_000_000_000_000);
    for call in [
        format!("err_compose({before}, 0, 0, 0)"),
        format!("err_min_id({before})"),
        format!("err_max_id({before})"),
    ] {
        let err = db.error_of(&format!("SELECT {call};"));
        assert!(
            err.contains("is before the layout's epoch, 2010-11-04"),
            "{call}: {err}"
        );
        assert!(err.contains("2001-09-09"), "{call} names the time: {err}");
    }
    let after = db.time(4_000_000_000_000);
    let err = db.error_of(&format!("SELECT err_max_id({after});"));
    assert!(
        err.contains("is after the last time the layout can encode, 2080-07-10"),
        "{err}"
    );
    let t = db.true_text();
    let nulls = db.one_row(
        "SELECT err_time(NULL) IS NULL, err_machine(NULL) IS NULL, \
         err_compose(NULL, 1, 1, 1) IS NULL, err_min_id(NULL) IS NULL;",
    );
    assert_eq!(nulls, [t, t, t, t]);

    // Sonyflake's 10 ms tick: times are floored to it, both ways.
    db.load(&["--layout", "sonyflake", "--prefix", "err_sony"]);
    let epoch = Layout::sonyflake().epoch_ms();
    let tick_1 = 1u64 << 24;
    for ms in [10, 11, 19] {
        let at = db.time(epoch + ms);
        let got = db.one_row(&format!(
            "SELECT err_sony_min_id({at}), err_sony_compose({at}, 0, 0);"
        ));
        assert_eq!(got, [tick_1.to_string(), tick_1.to_string()], "+{ms} ms");
    }
    let time = db.one_row(&format!(
        "SELECT {};",
        db.time_text(&format!("err_sony_time({})", tick_1 | 0xFF_FFFF))
    ));
    assert_eq!(time, [utc_text(epoch + 10)]);

    // An epoch before 1970: times before the Unix epoch, both ways.
    db.load(&[
        "--layout",
        "time:41,node:10,sequence:12",
        "--epoch=-86400000",
        "--prefix",
        "neg",
    ]);
    let at = db.time(-86_400_000 + 43_200_005);
    let id = ((43_200_005u64 << 22) | (3 << 12) | 4).to_string();
    let got = db.one_row(&format!(
        "SELECT neg_compose({at}, 3, 4), neg_min_id({at});"
    ));
    assert_eq!(got, [id.clone(), (43_200_005u64 << 22).to_string()]);
    let time = db.one_row(&format!(
        "SELECT {};",
        db.time_text(&format!("neg_time({id})"))
    ));
    assert_eq!(time, ["1969-12-31 12:00:00.005"]);

    // A field named like an SQL keyword, and a layout whose times run past
    // what the database's time type holds.
    db.load(&[
        "--layout",
        "time:41,order:10,sequence:12",
        "--epoch",
        "0",
        "--prefix",
        "kw",
    ]);
    let got = db.one_row(&format!("SELECT kw_compose({}, 5, 7);", db.time(1000)));
    assert_eq!(got, [((1000u64 << 22) | (5 << 12) | 7).to_string()]);
    assert_eq!(db.one_row(&format!("SELECT kw_order({});", got[0])), ["5"]);
    db.load(&[
        "--layout",
        "time:62,node:1",
        "--epoch",
        "0",
        "--prefix",
        "far",
    ]);
    let far = 1i64 << 55; // 2^54 ms: half a million years
    let err = db.error_of(&format!("SELECT far_time({far});"));
    let holds = match db {
        Db::Postgres => "which timestamptz cannot hold",
        Db::Mariadb => "which DATETIME cannot hold",
    };
    assert!(
        err.contains(&format!("id {far} is from Unix ms {}", 1i64 << 54)),
        "{err}"
    );
    assert!(err.contains(holds), "{err}");
    let near = db.one_row(&format!("SELECT {};", db.time_text("far_time(2000)")));
    assert_eq!(near, [utc_text(1000)]);
    // The type's last millisecond reads exactly (no floating point on the
    // way: a double is off by about a millisecond there); one more is refused.
    let last = match db {
        Db::Postgres => 9_224_318_015_999_999,
        Db::Mariadb => DATETIME_MAX_MS,
    };
    let id = last << 1;
    let edge = db.one_row(&format!(
        "SELECT {};",
        db.time_text(&format!("far_time({id})"))
    ));
    assert_eq!(edge, [utc_text(last)]);
    let err = db.error_of(&format!("SELECT far_time({});", (last + 1) << 1));
    assert!(err.contains(holds), "{err}");
}

/// The vectors' readings: one ID under every preset. SQL has no verdicts,
/// but what it reads must agree with them: a possible or implausible
/// reading's time is the time the preset's `_time` function gives, and an
/// impossible one (a bit set that the layout keeps 0) is refused.
fn functions_read_the_vectors_readings(db: Db) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/vectors.json");
    let vectors: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // A namespace of its own: the vectors' test loads the same presets
    // into the shared one, and MySQL replaces a function by dropping it
    // first, so a reader there can find it missing for an instant.
    let place = db.at("readings").fresh();
    for preset in snowflake::Layout::PRESETS {
        place.load(&["--layout", preset]);
    }
    let mut checked = 0;
    for case in vectors["readings"].as_array().unwrap() {
        // The mapping the functions' comment states: two's complement.
        let id = case["id"].as_str().unwrap().parse::<u64>().unwrap() as i64;
        for reading in case["readings"].as_array().unwrap() {
            let preset = reading["layout"].as_str().unwrap();
            let what = format!("{db:?}: {id} under {preset}");
            let time = format!("SELECT {};", db.time_text(&format!("{preset}_time({id})")));
            match (
                reading["verdict"].as_str().unwrap(),
                reading["timestamp_ms"].as_i64(),
            ) {
                ("impossible", _) => {
                    place.error_of(&time);
                }
                (_, Some(ts)) if db == Db::Mariadb && ts > DATETIME_MAX_MS => {
                    place.error_of(&time);
                }
                (_, Some(ts)) => assert_eq!(place.one_row(&time), [utc_text(ts)], "{what}"),
                (verdict, None) => panic!("{what}: a {verdict} reading without a time"),
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 22 * snowflake::Layout::PRESETS.len(),
        "{checked} readings"
    );
}

#[test]
#[ignore = "needs PostgreSQL: run scripts/sql-test"]
fn postgres_functions_work_in_indexes_generated_columns_and_partition_bounds() {
    let db = Db::Postgres;
    db.load(&["--layout", "discord", "--prefix", "idx"]);
    let marked = db.one_row(
        "SELECT count(*) FROM pg_proc WHERE proname LIKE 'idx\\_%' \
         AND provolatile = 'i' AND proparallel = 's' AND proisstrict;",
    );
    assert_eq!(marked, ["7"], "time, three fields, compose, min_id, max_id");
    let got = db.one_row(
        "DROP TABLE IF EXISTS idx_posts, idx_parts;
         CREATE TABLE idx_posts (
           id bigint PRIMARY KEY,
           at timestamptz GENERATED ALWAYS AS (idx_time(id)) STORED);
         CREATE INDEX ON idx_posts (idx_worker(id));
         CREATE TABLE idx_parts (id bigint) PARTITION BY RANGE (id);
         CREATE TABLE idx_parts_2024 PARTITION OF idx_parts
           FOR VALUES FROM (idx_min_id('2024-01-01Z')) TO (idx_min_id('2025-01-01Z'));
         INSERT INTO idx_posts (id) VALUES (idx_compose('2024-06-01Z', 3, 1, 2));
         INSERT INTO idx_parts SELECT id FROM idx_posts;
         SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), idx_worker(id),
                (SELECT count(*) FROM idx_parts_2024)
           FROM idx_posts;",
    );
    assert_eq!(got, ["2024-06-01", "3", "1"]);
}

#[test]
#[ignore = "needs MariaDB: run scripts/sql-test"]
fn mariadb_functions_are_deterministic_and_read_no_data() {
    let db = Db::Mariadb;
    db.load(&["--layout", "instagram", "--prefix", "pure"]);
    let marked = db.one_row(
        "SELECT COUNT(*) FROM information_schema.ROUTINES \
         WHERE ROUTINE_SCHEMA = 'snowflake_test' AND ROUTINE_NAME LIKE 'pure\\_%' \
         AND IS_DETERMINISTIC = 'YES' AND SQL_DATA_ACCESS = 'NO SQL';",
    );
    assert_eq!(marked, ["6"], "time, two fields, compose, min_id, max_id");
    // Loading twice replaces the functions.
    db.load(&["--layout", "instagram", "--prefix", "pure"]);
}

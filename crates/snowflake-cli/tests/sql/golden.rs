//! What `snowflake sql` prints, to the byte, for both dialects: the read
//! functions, the generator and the partitions of layouts that take every
//! branch of the writers (a sign bit, all 64 bits, 53 bits, ticks of 10 ms,
//! an epoch before 1970 or before what a time type holds, times past it, a
//! node below the sequence, no node at all, a summer-time change), and the
//! words of every refusal of its own. The scripts were hardened against
//! attacks (issue 25): a change to them is a change a reviewer must see, so
//! any difference fails here and shows the first line that differs.
//!
//! After a change meant to alter the SQL, write the files anew with
//! `SNOWFLAKE_BLESS=1 cargo test -p snowflake-cli --test sql golden` and read
//! their diff.

use std::path::PathBuf;

use crate::db::snowflake;
use crate::support::Printed;

/// Every dialect the command offers, as its refusal of another lists
/// them: a new one without its golden files fails here.
fn dialects() -> Vec<String> {
    let err = snowflake()
        .args(["sql", "--dialect", "?"])
        .assert()
        .code(2)
        .stderr_text();
    let (_, values) = err
        .split_once("[possible values: ")
        .unwrap_or_else(|| panic!("no values listed: {err}"));
    let values = &values[..values.find(']').unwrap()];
    values.split(", ").map(str::to_owned).collect()
}

/// The scripts: a name, and the arguments after `sql --dialect D`.
const SCRIPTS: &[(&str, &str)] = &[
    ("twitter", ""),
    ("discord", "--layout discord"),
    ("sonyflake", "--layout sonyflake"),
    ("mastodon", "--layout mastodon"),
    ("js53", "--layout js53"),
    (
        "custom-before-1970",
        "--layout time:41,node:10,sequence:12 --epoch -86400000 --prefix posts",
    ),
    (
        "custom-past-the-time-types",
        "--layout time:50,sequence:13 --tick-ms 10",
    ),
    (
        "custom-before-the-time-types",
        "--layout time:50,sequence:13 --epoch -300000000000000",
    ),
    (
        "generator-twitter",
        "--generator -f datacenter=1 -f machine=7",
    ),
    (
        "generator-discord",
        "--layout discord --generator -f worker=31 -f process=3",
    ),
    (
        "generator-sonyflake",
        "--layout sonyflake --generator -f machine=5",
    ),
    ("generator-mastodon", "--layout mastodon --generator"),
    (
        "generator-custom",
        "--layout time:41,node:10,sequence:12 --epoch -86400000 --tick-ms 4 --prefix orders \
         --generator -f node=1023",
    ),
    (
        "partitions-days",
        "--partitions posts --from 2025-01-30 --to 2025-02-02 --every day",
    ),
    (
        "partitions-weeks-new-york",
        "--partitions app.events --from 2025-02-26 --to 2025-03-20 --every week \
         --time-zone America/New_York",
    ),
    (
        "partitions-months-sonyflake",
        "--layout sonyflake --epoch 1577836800003 --partitions _log --from 2024-11-15 \
         --to 2025-02-01 --every month",
    ),
    (
        "partitions-discord",
        "--layout discord --partitions msgs --from 2084-09-01 --to 2084-09-05 --every day",
    ),
];

/// The refusals of `snowflake sql` itself, for every dialect, as the
/// arguments after `sql --dialect D`; a word in '' is one argument.
const REFUSALS: &[&str] = &[
    "--prefix 9lives",
    "--prefix 'a;DROP TABLE x'",
    "--layout time:41,compose:10,sequence:12",
    "--layout time:41,ts:10,sequence:12",
    "--layout time:41,aaaaaaaaaaaaaaaaaaaaaaa:10,sequence:12 \
     --prefix pppppppppppppppppppppppppppppppppppppppp",
    "-f machine=1",
    "--generator",
    "--generator -f datacenter=1",
    "--layout time:62,node:1 --generator -f node=1",
    "--generator -f datacenter=1 -f machine=1 -f sequence=3",
    "--layout time:41,next_id:10,sequence:12 --generator -f next_id=1",
    "--layout time:41,axxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,\
     cxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,dxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,\
     exxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,fxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,\
     gxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,hxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1,sequence:12 \
     --generator -f axxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 -f bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 \
     -f cxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 -f dxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 \
     -f exxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 -f fxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 \
     -f gxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1 -f hxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1",
    "--partitions posts;drop --from 2025-01-01 --to 2025-01-02 --every day",
    "--partitions pppppppppppppppppppppppppppppppppppppppppppppppppppppp \
     --from 2025-01-01 --to 2025-01-02 --every day",
    "--partitions posts --from 2025-02-01 --to 2025-01-01 --every day",
    "--partitions posts --from 2009-01-01 --to 2025-01-01 --every month",
    "--partitions posts --from 2080-07-01 --to 2080-07-10 --every day",
    "--layout discord --partitions posts --from 2084-09-01 --to 2084-09-30 --every day",
    "--epoch 0 --partitions posts --from 2001-01-01 --to 2023-06-30 --every day",
    // MySQL's last partition that fits (8191 periods and p_before), and the
    // first that does not.
    "--epoch 0 --partitions posts --from 2001-01-01 --to 2023-06-05 --every day",
    "--epoch 0 --partitions posts --from 2001-01-01 --to 2023-06-06 --every day",
    "--layout mastodon --partitions posts --from 9999-12-01 --to 9999-12-31 --every month",
];

/// `sql --dialect D` and `args`, split at spaces outside ''.
fn command_line(dialect: &str, args: &str) -> Vec<String> {
    let mut words = vec!["sql".to_owned(), "--dialect".to_owned(), dialect.to_owned()];
    let mut quoted = false;
    let mut word: Option<String> = None;
    for c in args.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_default();
            }
            ' ' if !quoted => words.extend(word.take()),
            c => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

fn golden(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql/golden")).join(name)
}

fn blessing() -> bool {
    std::env::var_os("SNOWFLAKE_BLESS").is_some_and(|v| v == "1")
}

/// `actual` is what `file` holds; with SNOWFLAKE_BLESS=1, it is written
/// there instead.
fn compare(file: &str, actual: &str) {
    let path = golden(file);
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; SNOWFLAKE_BLESS=1 writes it", path.display()));
    if expected == actual {
        return;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    panic!(
        "{file} differs from line {}:\n  expected: {:?}\n  actual:   {:?}\n\
         (a change meant to alter the SQL: SNOWFLAKE_BLESS=1, then read the diff)",
        line + 1,
        expected.lines().nth(line),
        actual.lines().nth(line),
    );
}

#[test]
fn every_script_is_as_it_was() {
    let dialects = dialects();
    assert!(dialects.len() >= 2, "{dialects:?}");
    for dialect in &dialects {
        for (name, args) in SCRIPTS {
            let sql = snowflake()
                .args(command_line(dialect, args))
                .assert()
                .success()
                .stdout_text();
            compare(&format!("{dialect}/{name}.sql.golden"), &sql);
        }
    }
}

#[test]
fn every_refusal_says_what_it_did() {
    let mut out = String::new();
    for dialect in dialects() {
        for args in REFUSALS {
            let args = command_line(&dialect, args);
            let run = snowflake().args(&args).assert();
            let code = run.get_output().status.code();
            // The one that only MySQL refuses is a script in PostgreSQL.
            let said = match code {
                Some(0) => format!("{} lines\n", run.stdout_text().lines().count()),
                _ => run.stdout("").stderr_text(),
            };
            out.push_str(&format!(
                "$ snowflake {}\nexit {code:?}: {said}",
                args.join(" ")
            ));
        }
    }
    compare("refusals.golden", &out);
}

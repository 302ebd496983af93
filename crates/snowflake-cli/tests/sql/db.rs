//! The `snowflake` command, and the database servers through their own
//! clients (`psql`, `mariadb`): one script a call, many at once for load,
//! and restarts.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use snowflake::UnixMillis;

pub use crate::support::snowflake;
use crate::support::{stderr_of, stdout_of};

/// The script `snowflake sql` prints for these arguments.
pub fn sql_of(args: &[&str]) -> String {
    stdout_of(&[&["sql"], args].concat())
}

/// One line on stderr, nothing on stdout and exit status 2.
pub fn refusal(args: &[&str]) -> String {
    let err = stderr_of(&[&["sql"], args].concat(), 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run scripts/sql-test, which starts the databases and sets it")
    })
}

/// Every use of a server holds this for reading; a restart holds it for
/// writing, so that no test talks to a server while it is down.
static SERVERS: RwLock<()> = RwLock::new(());

fn servers_up() -> RwLockReadGuard<'static, ()> {
    SERVERS
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Postgres,
    Mariadb,
}

/// A database server, and a schema (PostgreSQL) or database (MariaDB) in it
/// that a test has to itself: generators of different tests, or of
/// different runs, do not meet.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub db: Db,
    pub ns: &'static str,
}

/// Where the read functions' tests work.
const SHARED_NS: &str = "snowflake_test";

impl Db {
    pub fn dialect(self) -> &'static str {
        match self {
            Db::Postgres => "postgres",
            Db::Mariadb => "mysql",
        }
    }

    /// The schema or database `ns`, created on first use.
    pub fn at(self, ns: &'static str) -> Place {
        Place { db: self, ns }
    }

    pub fn one_row(self, sql: &str) -> Vec<String> {
        self.at(SHARED_NS).one_row(sql)
    }

    pub fn error_of(self, sql: &str) -> String {
        self.at(SHARED_NS).error_of(sql)
    }

    pub fn load(self, args: &[&str]) {
        self.at(SHARED_NS).load(args)
    }

    /// A time literal of the dialect, in UTC.
    pub fn time(self, ms: i64) -> String {
        match self {
            Db::Postgres => format!("timestamptz '{}+00'", utc_text(ms)),
            Db::Mariadb => format!("TIMESTAMP'{}'", utc_text(ms)),
        }
    }

    /// A time-valued expression as `YYYY-MM-DD HH:MM:SS.mmm` in UTC.
    pub fn time_text(self, expr: &str) -> String {
        match self {
            Db::Postgres => {
                format!("to_char(({expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')")
            }
            Db::Mariadb => expr.to_owned(),
        }
    }

    /// The database clock now, Unix milliseconds, read when evaluated (not
    /// when the statement began). MariaDB's reads UTC: sessions here run
    /// at a fixed offset, which has no hour that repeats.
    pub fn clock_ms(self) -> &'static str {
        match self {
            Db::Postgres => "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            Db::Mariadb => "CAST(UNIX_TIMESTAMP(SYSDATE(3)) * 1000 AS SIGNED)",
        }
    }

    pub fn true_text(self) -> &'static str {
        match self {
            Db::Postgres => "t",
            Db::Mariadb => "1",
        }
    }

    /// Stops the server, cleanly or as a crash would (`clean`, `crash`), and
    /// starts it again, through scripts/sql-test; no test uses a server
    /// meanwhile.
    pub fn restart(self, how: &str) {
        Exclusive::take().restart(self, how, &[]);
    }
}

/// The servers to one test alone, for as long as it holds this: for
/// restarts, and for what it does with a server started unlike the others.
pub struct Exclusive(#[allow(dead_code)] RwLockWriteGuard<'static, ()>);

impl Exclusive {
    pub fn take() -> Exclusive {
        Exclusive(
            SERVERS
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    /// Restarts `db` as [`Db::restart`] does, with these server options
    /// until its next restart.
    pub fn restart(&self, db: Db, how: &str, options: &[&str]) {
        let which = match db {
            Db::Postgres => "postgres",
            Db::Mariadb => "mariadb",
        };
        let out = Command::new(env("SNOWFLAKE_TEST_RESTART"))
            .args(["--restart", which, how])
            .args(options)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "restarting {which} ({how}) failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// [`Place::run`], while this test has the servers to itself.
    pub fn run(&self, place: Place, sql: &str) -> Result<String, String> {
        place.spawn(&[sql.to_owned()]).pop().unwrap()
    }
}

impl Place {
    /// The client, and what a script begins with to work in this place.
    fn client(self) -> (Command, String) {
        let ns = self.ns;
        match self.db {
            Db::Postgres => {
                let mut c = Command::new("psql");
                c.arg(env("SNOWFLAKE_TEST_POSTGRES"))
                    .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-F", "\t"])
                    // The functions must not depend on the session's time
                    // zone: run them under one with summer time.
                    .env("PGTZ", "America/New_York");
                let setup = format!(
                    "SET client_min_messages = warning;\n\
                     CREATE SCHEMA IF NOT EXISTS {ns};\nSET search_path = {ns};\n"
                );
                (c, setup)
            }
            Db::Mariadb => {
                let mut c = Command::new("mariadb");
                c.arg("--no-defaults")
                    .arg(format!("--socket={}", env("SNOWFLAKE_TEST_MARIADB_SOCKET")))
                    .args(["-u", "root", "-N", "-B"]);
                let setup = format!(
                    "CREATE DATABASE IF NOT EXISTS {ns};\nUSE {ns};\nSET time_zone = '+05:00';\n"
                );
                (c, setup)
            }
        }
    }

    /// Empties the schema or database, so that a test starts from nothing
    /// whatever ran before.
    pub fn fresh(self) -> Place {
        let drop = match self.db {
            Db::Postgres => format!("DROP SCHEMA {} CASCADE;", self.ns),
            Db::Mariadb => format!("DROP DATABASE {};", self.ns),
        };
        self.run(&drop).unwrap();
        self
    }

    /// Runs a script through the database's own client; its output, columns
    /// separated by tabs, or the server's error.
    pub fn run(self, sql: &str) -> Result<String, String> {
        let mut outs = self.clients(&[sql.to_owned()]);
        outs.pop().unwrap()
    }

    /// Runs the scripts at once, each through a client and a connection of
    /// its own; the output or error of each, in order.
    pub fn clients(self, scripts: &[String]) -> Vec<Result<String, String>> {
        let _up = servers_up();
        self.spawn(scripts)
    }

    fn spawn(self, scripts: &[String]) -> Vec<Result<String, String>> {
        std::thread::scope(|scope| {
            let running: Vec<_> = scripts
                .iter()
                .map(|sql| {
                    let (mut command, setup) = self.client();
                    let mut child = command
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap_or_else(|e| panic!("cannot run the {:?} client: {e}", self.db));
                    let mut stdin = child.stdin.take().unwrap();
                    // Written from a thread of its own: a long script would
                    // fill the pipe while the client waits for its output to
                    // be read.
                    scope.spawn(move || {
                        stdin.write_all(setup.as_bytes())?;
                        stdin.write_all(sql.as_bytes())
                    });
                    child
                })
                .collect();
            running
                .into_iter()
                .map(|child| {
                    let out = child.wait_with_output().unwrap();
                    if out.status.success() {
                        Ok(String::from_utf8(out.stdout).unwrap().trim_end().to_owned())
                    } else {
                        Err(String::from_utf8(out.stderr).unwrap())
                    }
                })
                .collect()
        })
    }

    pub fn one_row(self, sql: &str) -> Vec<String> {
        match self.run(sql) {
            Ok(out) => out.split('\t').map(str::to_owned).collect(),
            Err(err) => panic!("{self:?}: {sql}\n{err}"),
        }
    }

    pub fn error_of(self, sql: &str) -> String {
        match self.run(sql) {
            Ok(out) => panic!("{self:?} answered {out:?} to {sql}, not an error"),
            Err(err) => err,
        }
    }

    /// Generates the functions with `snowflake sql` and loads them.
    pub fn load(self, args: &[&str]) {
        let sql = self.script(args);
        if let Err(err) = self.run(&sql) {
            panic!("{self:?} refused the script of {args:?}:\n{err}");
        }
    }

    /// The script of `snowflake sql` for this dialect and these arguments.
    pub fn script(self, args: &[&str]) -> String {
        let mut all = vec!["--dialect", self.db.dialect()];
        all.extend_from_slice(args);
        sql_of(&all)
    }
}

/// `2010-11-04 01:42:55.657`, from the core's RFC 3339 text (years past 9999
/// come as `+010889`).
pub fn utc_text(ms: i64) -> String {
    let text = UnixMillis(ms).to_string();
    text.trim_start_matches('+')
        .trim_start_matches('0')
        .replace('T', " ")
        .replace('Z', "")
}

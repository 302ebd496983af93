//! The `snowflake` command, and the database servers through their own
//! clients (`psql`, `mariadb`): one script a call, many at once for load,
//! and restarts.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

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

/// Each check named, a `fn(Db)` of the module, as a test on each server:
/// `postgres::CHECK` and `mariadb::CHECK`, ignored by a plain `cargo test`,
/// as the servers come from scripts/sql-test. One invocation a module.
macro_rules! on_both_servers {
    ($($check:ident),+ $(,)?) => {
        mod postgres {
            $(
                #[test]
                #[ignore = "needs PostgreSQL: run scripts/sql-test"]
                fn $check() {
                    super::$check($crate::db::Db::Postgres);
                }
            )+
        }

        mod mariadb {
            $(
                #[test]
                #[ignore = "needs MariaDB: run scripts/sql-test"]
                fn $check() {
                    super::$check($crate::db::Db::Mariadb);
                }
            )+
        }
    };
}
pub(crate) use on_both_servers;

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
/// A database server, and a database in it that a test has to itself
/// (PostgreSQL: and a schema of that database): generators of different
/// tests, or of different runs, do not meet. A generator is checked against
/// every other of its database (PostgreSQL) or of the databases its
/// installer can see (MariaDB: each place has a user of its own, who sees
/// only its database), so one database a test keeps tests apart.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub db: Db,
    /// The database, created on first use.
    pub ns: &'static str,
    /// PostgreSQL: the schema the scripts run in, created by the owner;
    /// `None` leaves the server's search_path (`"$user", public`).
    schema: Option<&'static str>,
    who: Who,
}

/// Who a place's client connects as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// PostgreSQL's superuser; in MariaDB the place's own user, with every
    /// right on its database and none elsewhere.
    Owner,
    /// The superuser of either server.
    Root,
    /// A role or user the test made (PostgreSQL: with LOGIN).
    User(&'static str),
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

    /// The database `ns` (PostgreSQL: its schema `ns`), created on first use.
    pub fn at(self, ns: &'static str) -> Place {
        Place {
            db: self,
            ns,
            schema: Some(ns),
            who: Who::Owner,
        }
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

    /// `n` rows to select from, numbered from 1.
    pub fn rows(self, n: usize) -> String {
        match self {
            Db::Postgres => format!("generate_series(1, {n})"),
            Db::Mariadb => format!("seq_1_to_{n}"),
        }
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

/// The databases made so far in this run of the tests, so that each is
/// made once whichever test comes to it first.
static MADE: Mutex<Vec<(Db, &str)>> = Mutex::new(Vec::new());

impl Place {
    /// The same database, in schema `schema` (PostgreSQL; MariaDB has
    /// none: the database is its schema).
    pub fn schema(self, schema: &'static str) -> Place {
        Place {
            schema: Some(schema),
            ..self
        }
    }

    /// The same database with the server's own search_path
    /// (`"$user", public`), as a session that sets none has it.
    pub fn default_search_path(self) -> Place {
        Place {
            schema: None,
            ..self
        }
    }

    /// The same database, connected as `user`: a PostgreSQL role with
    /// LOGIN or a MariaDB user the test made.
    pub fn user(self, user: &'static str) -> Place {
        Place {
            who: Who::User(user),
            ..self
        }
    }

    /// This database and `other` (MariaDB), both connected as `user`, made
    /// here with every right on the two and none elsewhere.
    pub fn shared_with(self, other: Place, user: &'static str) -> (Place, Place) {
        self.root()
            .run(&format!(
                "CREATE USER IF NOT EXISTS {user}@localhost;\n\
                 GRANT ALL ON {}.* TO {user}@localhost;\n\
                 GRANT ALL ON {}.* TO {user}@localhost;",
                self.ns, other.ns
            ))
            .unwrap();
        (self.user(user), other.user(user))
    }

    /// The same database, connected as the server's superuser.
    pub fn root(self) -> Place {
        Place {
            who: Who::Root,
            ..self
        }
    }

    /// The client, and what a script begins with to work in this place.
    fn client(self) -> (Command, String) {
        let ns = self.ns;
        match self.db {
            Db::Postgres => {
                let user = match self.who {
                    Who::User(user) => user,
                    Who::Owner | Who::Root => "postgres",
                };
                let mut c = Command::new("psql");
                c.arg(format!(
                    "{} dbname={ns} user={user}",
                    env("SNOWFLAKE_TEST_POSTGRES")
                ))
                .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-F", "\t"])
                // The functions must not depend on the session's time
                // zone: run them under one with summer time.
                .env("PGTZ", "America/New_York");
                let mut setup = String::from("SET client_min_messages = warning;\n");
                if let Some(schema) = self.schema {
                    if !matches!(self.who, Who::User(_)) {
                        setup.push_str(&format!("CREATE SCHEMA IF NOT EXISTS {schema};\n"));
                    }
                    setup.push_str(&format!("SET search_path = {schema};\n"));
                }
                (c, setup)
            }
            Db::Mariadb => {
                let user = match self.who {
                    Who::Owner => ns,
                    Who::Root => "root",
                    Who::User(user) => user,
                };
                let mut c = Command::new("mariadb");
                c.arg("--no-defaults")
                    .arg(format!("--socket={}", env("SNOWFLAKE_TEST_MARIADB_SOCKET")))
                    .args(["-u", user, "-N", "-B"]);
                let setup = format!("USE {ns};\nSET time_zone = '+05:00';\n");
                (c, setup)
            }
        }
    }

    /// What makes the database (and its user) when it does not exist,
    /// run by the superuser; with `fresh`, it is dropped first.
    fn making(self, fresh: bool) -> String {
        let ns = self.ns;
        match (self.db, fresh) {
            (Db::Postgres, false) => format!(
                "SELECT 'CREATE DATABASE {ns}' WHERE NOT EXISTS \
                 (SELECT FROM pg_database WHERE datname = '{ns}')\\gexec\n"
            ),
            (Db::Postgres, true) => {
                format!("DROP DATABASE IF EXISTS {ns} WITH (FORCE);\nCREATE DATABASE {ns};\n")
            }
            (Db::Mariadb, fresh) => format!(
                "{}CREATE DATABASE IF NOT EXISTS {ns};\n\
                 CREATE USER IF NOT EXISTS {ns}@localhost;\n\
                 GRANT ALL ON {ns}.* TO {ns}@localhost;\n",
                if fresh {
                    format!("DROP DATABASE IF EXISTS {ns};\n")
                } else {
                    String::new()
                }
            ),
        }
    }

    /// Makes the database if this run has not yet (or anew, `fresh`).
    fn make(self, fresh: bool) {
        let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let known = made.contains(&(self.db, self.ns));
        if known && !fresh {
            return;
        }
        let admin = Place {
            db: self.db,
            ns: match self.db {
                Db::Postgres => "postgres",
                Db::Mariadb => "mysql",
            },
            schema: None,
            who: Who::Root,
        };
        if let Err(err) = admin.start(&[self.making(fresh)]).pop().unwrap() {
            panic!("{self:?}: cannot make the database:\n{err}");
        }
        if !known {
            made.push((self.db, self.ns));
        }
    }

    /// Empties the database, so that a test starts from nothing whatever
    /// ran before.
    pub fn fresh(self) -> Place {
        let _up = servers_up();
        self.make(true);
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
        self.make(false);
        self.start(scripts)
    }

    /// The scripts' clients, started at once and waited for.
    fn start(self, scripts: &[String]) -> Vec<Result<String, String>> {
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
                    // And read from one: a client whose output nobody reads
                    // stops when the pipe is full, so clients read one after
                    // another would run one at a time.
                    scope.spawn(move || child.wait_with_output().unwrap())
                })
                .collect();
            running
                .into_iter()
                .map(|reading| {
                    let out = reading.join().unwrap();
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

    /// Installs the read functions and a generator under `prefix`.
    pub fn install(self, prefix: &str, args: &[&str]) {
        self.load(&generator_args(prefix, args));
    }

    /// Tries to install a generator; the server's error if it refuses.
    pub fn try_install(self, prefix: &str, args: &[&str]) -> Result<(), String> {
        self.run(&self.generator_script(prefix, args)).map(|_| ())
    }

    /// The script that installs the read functions and a generator under
    /// `prefix`.
    pub fn generator_script(self, prefix: &str, args: &[&str]) -> String {
        self.script(&generator_args(prefix, args))
    }

    /// `n` IDs from `function`, taken in one statement, as numbers.
    pub fn take(self, function: &str, n: usize) -> Vec<i64> {
        let out = self
            .run(&format!("SELECT {function}() FROM {};", self.db.rows(n)))
            .unwrap();
        out.lines().map(|l| l.parse().unwrap()).collect()
    }

    /// Runs `select`, whose rows are one number each, between two reads of
    /// the database clock, in one call to the server: the clock before, the
    /// numbers, the clock after.
    pub fn between_clocks(self, select: &str) -> (i64, Vec<i64>, i64) {
        let clock = self.db.clock_ms();
        let out = self
            .run(&format!("SELECT {clock};\n{select}\nSELECT {clock};"))
            .unwrap();
        let mut numbers: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
        let after = numbers.pop().unwrap();
        let before = numbers.remove(0);
        (before, numbers, after)
    }

    /// The script of `snowflake sql` for this dialect and these arguments.
    pub fn script(self, args: &[&str]) -> String {
        let mut all = vec!["--dialect", self.db.dialect()];
        all.extend_from_slice(args);
        sql_of(&all)
    }
}

/// The arguments of a generator under `prefix`, then `args`.
fn generator_args<'a>(prefix: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--prefix", prefix, "--generator"];
    all.extend_from_slice(args);
    all
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

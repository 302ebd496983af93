//! Private PostgreSQL servers on loopback, one set per test (free ports,
//! temporary directories, run as the `postgres` user when the tests run as
//! root), and `psql` clients that run at once, each read by a thread of
//! its own. The extension must be installed into the server's `pg_config`
//! first: `scripts/pg-extension test` does that, then runs these.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use snowflake::{Id, Layout};

/// What every test server has, but for its node and its own lines.
pub const BASE_CONF: &[&str] = &[
    "shared_preload_libraries = 'snowflake'",
    "listen_addresses = '127.0.0.1'",
    "max_connections = 60",
    // The tests crash servers, not the machine: what was written reaches
    // the operating system, which keeps it across a killed process.
    "fsync = off",
];

/// The node the tests' servers issue as, in the default layout.
pub const NODE: &str = "snowflake.fields = 'datacenter=1,machine=7'";

/// The directory of the PostgreSQL programs: `SNOWFLAKE_PG_BIN`, or the
/// newest installed.
fn bin(program: &str) -> PathBuf {
    let dir = std::env::var_os("SNOWFLAKE_PG_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                .ok()?
                .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .collect();
            dirs.sort();
            dirs.pop()
        })
        .expect("no PostgreSQL: run scripts/pg-extension test");
    dir.join(program)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// A server program run as `postgres` when we are root: PostgreSQL will
/// not run as root.
fn as_postgres(program: &str) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(bin(program));
        command
    } else {
        Command::new(bin(program))
    }
}

fn run(mut command: Command, what: &str) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A private server: its directory is removed, and the server stopped,
/// however the test ends.
pub struct Server {
    root: PathBuf,
    pub data: PathBuf,
    pub port: u16,
    /// Variables for the server's processes (libfaketime's).
    env: Vec<(String, String)>,
    /// The running postmaster, our child.
    postmaster: Mutex<Option<Child>>,
}

impl Server {
    /// A new server with the base settings and `conf`, started, with the
    /// extension created in `postgres`.
    pub fn new(conf: &[&str]) -> Server {
        Server::with_env(conf, &[])
    }

    pub fn with_env(conf: &[&str], env: &[(&str, &str)]) -> Server {
        let server = Server::init(conf, env);
        server.start().expect("the server starts");
        server.sql("CREATE EXTENSION snowflake");
        server
    }

    /// A new server, initialised and configured but not started.
    pub fn init(conf: &[&str], env: &[(&str, &str)]) -> Server {
        let server = Server::empty(env);
        let mut initdb = as_postgres("initdb");
        initdb.arg("-D").arg(&server.data).args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
        ]);
        run(initdb, "initdb");
        server.configure(BASE_CONF);
        server.configure(conf);
        server
    }

    fn empty(env: &[(&str, &str)]) -> Server {
        let root = std::env::temp_dir().join(format!(
            "snowflake-pg-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir(&root).expect("a test directory");
        if is_root() {
            run(
                {
                    let mut c = Command::new("chown");
                    c.arg("postgres").arg(&root);
                    c
                },
                "chown",
            );
        }
        Server {
            data: root.join("data"),
            root,
            port: free_port(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            postmaster: Mutex::new(None),
        }
    }

    /// Appends lines to postgresql.conf (a later line wins).
    pub fn configure(&self, lines: &[&str]) {
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("postgresql.conf"))
            .expect("postgresql.conf");
        let sockets = format!("unix_socket_directories = '{}'", self.root.display());
        let port = format!("port = {}", self.port);
        for line in lines
            .iter()
            .copied()
            .chain([sockets.as_str(), port.as_str()])
        {
            writeln!(conf, "{line}").expect("postgresql.conf written");
        }
    }

    /// Appends a line to postgresql.auto.conf, which pg_basebackup -R
    /// writes primary_conninfo to and which wins over postgresql.conf.
    pub fn configure_auto(&self, line: &str) {
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("postgresql.auto.conf"))
            .expect("postgresql.auto.conf");
        writeln!(conf, "{line}").expect("postgresql.auto.conf written");
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("log")).unwrap_or_default()
    }

    /// Starts the postmaster as a child of the test, so that the test
    /// reaps it however it ends (a postmaster killed with SIGKILL whose
    /// zombie nobody reaps holds its PID, and the next start takes it for a
    /// running server); returns once it accepts connections.
    pub fn start(&self) -> Result<(), String> {
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", "env"]);
            c
        } else {
            Command::new("env")
        };
        // An operator's environment, not the test's: RUST_BACKTRACE from
        // a developer's shell would put a Rust backtrace in the DETAIL of
        // every PostgreSQL error raised inside the extension (pgrx adds it).
        command.args(["-u", "RUST_BACKTRACE", "-u", "RUST_LIB_BACKTRACE"]);
        for (k, v) in &self.env {
            command.arg(format!("{k}={v}"));
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.root.join("log"))
            .map_err(|e| e.to_string())?;
        let child = command
            .arg(bin("postgres"))
            .arg("-D")
            .arg(&self.data)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut slot = self.postmaster.lock().unwrap();
        *slot = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = slot
                .as_mut()
                .unwrap()
                .try_wait()
                .map_err(|e| e.to_string())?
            {
                *slot = None;
                return Err(format!("the server exited ({status}):\n{}", self.log()));
            }
            let ready = Command::new(bin("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("the server did not start:\n{}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the postmaster started by `start` to have exited.
    fn reap(&self) {
        if let Some(mut child) = self.postmaster.lock().unwrap().take() {
            let _ = child.wait();
        }
    }

    /// `pg_ctl` on this server's data directory, as the server's user.
    fn pg_ctl(&self, args: &[&str]) -> Command {
        let mut pg_ctl = as_postgres("pg_ctl");
        pg_ctl.arg("-D").arg(&self.data).args(args);
        pg_ctl
    }

    pub fn stop(&self) {
        run(self.pg_ctl(&["-m", "fast", "-w", "stop"]), "pg_ctl stop");
        self.reap();
    }

    /// `kill -9` of the postmaster, then of every process it had started,
    /// as a crash takes them all; returns once none is left.
    pub fn kill9(&self) {
        let pid_file = std::fs::read_to_string(self.data.join("postmaster.pid"))
            .expect("a running server's postmaster.pid");
        let postmaster: u32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
        let children = children_of(postmaster);
        let pids: Vec<String> = std::iter::once(postmaster)
            .chain(children.iter().copied())
            .map(|p| p.to_string())
            .collect();
        // A child may end between the listing and the kill: no matter.
        let _ = Command::new("kill")
            .arg("-KILL")
            .args(&pids)
            .stderr(Stdio::null())
            .status();
        self.reap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while pids.iter().any(|p| alive(p)) {
            assert!(
                Instant::now() < deadline,
                "processes outlived kill -9: {pids:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Four clients inserting into `ITEMS` (each row committed) and, when
    /// `selecting`, four taking IDs in transactions that never commit.
    pub fn load(&self, selecting: bool) -> Vec<Client> {
        let mut clients = Vec::new();
        for c in 0..4 {
            clients.push(self.client("postgres", inserts(c, 1_000_000)));
            if selecting {
                clients.push(self.client("postgres", selects(1_000_000, false)));
            }
        }
        clients
    }

    /// `kill9` once `ITEMS` holds 5,000 rows, with `clients` still running:
    /// every one of them is cut off. The highest ID any of them saw, of
    /// more than 1,000.
    pub fn kill9_mid_load(&self, clients: Vec<Client>) -> u64 {
        self.wait_for("(SELECT count(*) FROM items) >= 5000");
        self.kill9();
        let mut seen = Vec::new();
        for client in clients {
            let done = client.finish();
            assert!(!done.ok, "a client outlived the crash");
            seen.extend(ids(&done.lines));
        }
        assert!(
            seen.len() > 1_000,
            "too few IDs before the crash: {}",
            seen.len()
        );
        *seen.iter().max().unwrap()
    }

    /// A standby of `primary`, from `pg_basebackup` with its
    /// `primary_conninfo` written (`-R`), on a port of its own, started.
    pub fn standby_of(primary: &Server, env: &[(&str, &str)]) -> Server {
        let standby = Server::empty(env);
        let mut backup = as_postgres("pg_basebackup");
        backup
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &primary.port.to_string(),
                "-U",
                "postgres",
            ])
            .arg("-D")
            .arg(&standby.data)
            .args(["-R", "-X", "stream", "-c", "fast"]);
        run(backup, "pg_basebackup");
        standby.configure(&[]);
        standby.start().expect("the standby starts");
        standby
    }

    /// Makes the server read its configuration again (SIGHUP).
    pub fn reload(&self) {
        run(self.pg_ctl(&["reload"]), "pg_ctl reload");
    }

    pub fn promote(&self) {
        run(
            self.pg_ctl(&["-w", "-t", "60", "promote"]),
            "pg_ctl promote",
        );
    }

    /// `psql` to a database as a user: output unaligned, without headers or
    /// command tags, stopping at the first error.
    fn psql_command(&self, user: &str, db: &str) -> Command {
        let mut command = Command::new("psql");
        command
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", user, "-d", db]);
        command
    }

    /// `psql` to a database as a user, output unaligned without headers.
    pub fn psql(&self, user: &str, db: &str, sql: &str) -> Result<String, String> {
        let out = self
            .psql_command(user, db)
            .args(["-c", sql])
            .output()
            .expect("psql runs");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    /// `pg_dump --no-owner` of a database as a user: the dump, or what
    /// pg_dump said.
    pub fn pg_dump(&self, user: &str, db: &str) -> Result<String, String> {
        let out = Command::new("pg_dump")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", user, "--no-owner", db])
            .output()
            .expect("pg_dump runs");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    /// As `postgres` in `postgres`; the output, or the test fails.
    pub fn sql(&self, sql: &str) -> String {
        self.psql("postgres", "postgres", sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}\n{}", self.log()))
    }

    /// As `postgres` in `postgres`; the error, or the test fails.
    pub fn sql_err(&self, sql: &str) -> String {
        match self.psql("postgres", "postgres", sql) {
            Ok(out) => panic!("{sql} succeeded: {out}"),
            Err(err) => err,
        }
    }

    /// Polls `condition` (an SQL boolean) until it holds; fails the test
    /// after a minute.
    pub fn wait_for(&self, condition: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self
            .psql("postgres", "postgres", &format!("SELECT {condition}"))
            .as_deref()
            != Ok("t")
        {
            assert!(Instant::now() < deadline, "never true: {condition}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One ID from `next_id()`.
    pub fn next_id(&self) -> u64 {
        self.sql("SELECT snowflake.next_id()")
            .parse::<i64>()
            .unwrap() as u64
    }

    /// A `psql` running `script` (fed on its stdin), its output read as it
    /// comes by a thread of its own.
    pub fn client(&self, user: &str, script: String) -> Client {
        let mut child = self
            .psql_command(user, "postgres")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("psql runs");
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            // A client cut off by a crash stops reading: that is no error.
            let _ = stdin.write_all(script.as_bytes());
        });
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .collect::<Vec<String>>()
        });
        Client {
            child,
            writer: Some(writer),
            reader: Some(reader),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.data.join("postmaster.pid").exists() {
            let _ = self
                .pg_ctl(&["-m", "immediate", "-w", "stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        self.reap();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // pid (comm) state ppid ...: comm may hold spaces, so read
                // after its closing parenthesis.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(parent)
            })
        })
        .collect()
}

/// Whether a process exists and is not a zombie.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

/// A running `psql`.
pub struct Client {
    child: Child,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<Vec<String>>>,
}

/// What a `psql` printed, and whether it ended well.
#[derive(Debug)]
pub struct Finished {
    pub lines: Vec<String>,
    pub stderr: String,
    pub ok: bool,
}

impl Client {
    pub fn finish(mut self) -> Finished {
        let lines = self.reader.take().unwrap().join().unwrap();
        let _ = self.writer.take().unwrap().join();
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
        }
        let ok = self.child.wait().is_ok_and(|s| s.success());
        Finished { lines, stderr, ok }
    }
}

/// `SELECT snowflake.next_id()` `n` times, in one transaction that is
/// never committed when `commit` is false (the client is cut off first, or
/// rolls back).
pub fn selects(n: usize, commit: bool) -> String {
    let mut script = String::from("BEGIN;\n");
    for _ in 0..n {
        script.push_str("SELECT snowflake.next_id();\n");
    }
    script.push_str(if commit { "COMMIT;\n" } else { "ROLLBACK;\n" });
    script
}

/// `n` inserts of one row each, its ID the primary key's default, each
/// printing `id|before|after`: the clock read in the same statement just
/// before the ID was made (a column ahead of `id`, so computed first) and
/// just after.
pub fn inserts(client: usize, n: usize) -> String {
    let clock = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
    let mut script = String::new();
    for _ in 0..n {
        script.push_str(&format!(
            "INSERT INTO items (before_ms, client) VALUES ({clock}, {client}) \
             RETURNING id, before_ms, {clock};\n"
        ));
    }
    script
}

/// The table `inserts` writes to.
pub const ITEMS: &str = "CREATE TABLE items (before_ms bigint NOT NULL, client int NOT NULL, \
                         id bigint PRIMARY KEY DEFAULT snowflake.next_id())";

/// The IDs in lines of `id|...` or `id`.
pub fn ids(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .filter_map(|l| l.split('|').next()?.parse::<i64>().ok())
        .map(|id| id as u64)
        .collect()
}

/// The layout the tests' servers issue in.
pub fn twitter() -> Layout {
    Layout::twitter()
}

/// Checks that an ID is of the tests' node.
pub fn assert_node(id: u64) {
    let layout = twitter();
    let decoded = layout.decode(Id::new(id)).expect("a twitter ID");
    assert_eq!(
        (decoded.field("datacenter"), decoded.field("machine")),
        (Some(1), Some(7)),
        "{id} is not of node datacenter=1,machine=7"
    );
}

/// Checks that every ID of `after` is of the tests' node and above
/// `highest`, the highest handed out before: `after` says whence they came.
pub fn assert_all_above(ids: &[u64], highest: u64, after: &str) {
    for &id in ids {
        assert_node(id);
        assert!(
            id > highest,
            "{id} {after}, at or below {highest} handed out before"
        );
    }
}

/// Checks that an error message says every one of `needed`.
pub fn assert_mentions(err: &str, needed: &[&str]) {
    for needed in needed {
        assert!(err.contains(needed), "{needed} not in: {err}");
    }
}

/// The path of a file of the repository.
pub fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .join(path)
}

const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// A clock for a server: the machine's, moved by the offset in a file
/// that libfaketime reads at every clock reading, so that a test can set
/// it back while the server runs. The extension reads the clock the
/// core's way, through the C library, as a stepped system clock would be.
pub struct SkewedClock {
    offset: PathBuf,
}

impl SkewedClock {
    pub fn new(seconds: &str) -> SkewedClock {
        assert!(
            Path::new(FAKETIME).exists(),
            "{FAKETIME} is missing: scripts/pg-extension test installs libfaketime"
        );
        let offset = std::env::temp_dir().join(format!("snowflake-pg-clock-{}", free_port()));
        let clock = SkewedClock { offset };
        clock.set(seconds);
        clock
    }

    /// What the server's processes need in their environment.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LD_PRELOAD", FAKETIME.to_owned()),
            ("FAKETIME_TIMESTAMP_FILE", self.offset.display().to_string()),
            ("FAKETIME_NO_CACHE", "1".to_owned()),
        ]
    }

    /// Sets the clock `seconds` from the machine's (`-2`, `+0`, `-0.003`).
    pub fn set(&self, seconds: &str) {
        std::fs::write(&self.offset, format!("{seconds}\n")).expect("the clock's offset file");
    }
}

impl Drop for SkewedClock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.offset);
    }
}

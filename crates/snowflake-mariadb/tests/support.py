"""Private MariaDB servers for the tests and the benchmark of the loadable
function: each on loopback on a free port, in a directory of its own under
one temporary directory, with the library in a plugin directory of its own.
Nothing here knows what the function does."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LIBRARY_NAME = "snowflake_mariadb.so"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(features=None):
    """The release library, built with `features`, copied out of target/ so
    that a build with other features does not overwrite it."""
    cmd = ["nice", "-n", "10", "cargo", "build", "--release", "-q", "-p", "snowflake-mariadb"]
    if features:
        cmd += ["--features", features]
    run(cmd, cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "libsnowflake_mariadb.so")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def functions_sql():
    return subprocess.run(
        [os.path.join(ROOT, "scripts", "mariadb-function"), "--functions-sql"],
        check=True, capture_output=True, text=True).stdout


class SqlError(Exception):
    pass


class Server:
    """One private mariadbd. `options` are server options (without --);
    `defaults_file`, an option file the server reads at start and again at
    INSTALL SONAME, instead of none."""

    def __init__(self, workdir, name, library, options=(), defaults_file=None):
        self.dir = os.path.join(workdir, name)
        self.data = os.path.join(self.dir, "data")
        self.plugins = os.path.join(self.dir, "plugins")
        self.sock = os.path.join(self.dir, "mysql.sock")
        self.log = os.path.join(self.dir, "error.log")
        self.port = free_port()
        self.options = list(options)
        self.defaults = f"--defaults-file={defaults_file}" if defaults_file else "--no-defaults"
        self.proc = None
        os.makedirs(self.data)
        os.makedirs(self.plugins)
        shutil.copy(library, os.path.join(self.plugins, LIBRARY_NAME))
        user = ["--user=root"] if os.getuid() == 0 else []
        run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}", *user,
             "--auth-root-authentication-method=normal", "--skip-test-db"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self, extra=()):
        user = ["--user=root"] if os.getuid() == 0 else []
        cmd = ["/usr/sbin/mariadbd", self.defaults, f"--datadir={self.data}", *user,
               f"--socket={self.sock}", f"--port={self.port}", "--bind-address=127.0.0.1",
               f"--log-error={self.log}", f"--plugin-dir={self.plugins}",
               f"--plugin-load-add={LIBRARY_NAME}", "--innodb-flush-log-at-trx-commit=2",
               "--max-connections=200", "--innodb-buffer-pool-size=256M",
               *[f"--{o}" for o in self.options], *[f"--{o}" for o in extra]]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited: {self.tail()}")
            if subprocess.run(["mariadb-admin", "--no-defaults", f"--socket={self.sock}",
                               "-u", "root", "ping"], capture_output=True).returncode == 0:
                return self
            time.sleep(0.1)
        raise RuntimeError(f"mariadbd did not start: {self.tail()}")

    def stop(self, crash=False):
        if self.proc is None or self.proc.poll() is not None:
            self.proc = None
            return
        if crash:
            os.kill(self.proc.pid, signal.SIGKILL)
        else:
            subprocess.run(["mariadb-admin", "--no-defaults", f"--socket={self.sock}",
                            "-u", "root", "shutdown"], capture_output=True)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def tail(self, n=15):
        try:
            with open(self.log) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no log)"

    def client(self, user="root", database=None):
        cmd = ["mariadb", "--no-defaults", f"--socket={self.sock}", "-u", user, "-N", "-B"]
        if database:
            cmd.append(database)
        return cmd

    def sql(self, statements, user="root", database=None):
        """The rows the statements print, as lists of text; SqlError with
        the server's message when one fails."""
        done = subprocess.run(self.client(user, database), input=statements,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SqlError(done.stderr.strip())
        return [line.split("\t") for line in done.stdout.splitlines()]

    def value(self, statement, **kw):
        return self.sql(statement, **kw)[0][0]

    def named_row(self, statement):
        """The first row of `statement` as a dict by column name, or None."""
        done = subprocess.run([a for a in self.client() if a != "-N"], input=statement, capture_output=True,
                              text=True, check=True)
        lines = done.stdout.splitlines()
        return dict(zip(lines[0].split("\t"), lines[1].split("\t"))) if len(lines) > 1 else None

    def error(self, statements, **kw):
        """The message of the error the statements must fail with."""
        try:
            rows = self.sql(statements, **kw)
        except SqlError as err:
            return str(err)
        raise AssertionError(f"no error from {statements!r}: {rows}")

    def install_functions(self):
        self.sql(functions_sql())


def replicate(primary, replica):
    """Makes `replica` replicate `primary` from its current binary log
    position, over loopback."""
    primary.sql("CREATE USER IF NOT EXISTS repl@'127.0.0.1' IDENTIFIED BY 'repl';"
                "GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1'")
    log, pos = primary.sql("SHOW MASTER STATUS")[0][:2]
    replica.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}, "
                f"MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_LOG_FILE='{log}', "
                f"MASTER_LOG_POS={pos}; START SLAVE")


def caught_up(primary, replica, timeout=30):
    """The replica's SHOW SLAVE STATUS once it has applied everything the
    primary has logged so far, or stopped trying."""
    log, pos = primary.sql("SHOW MASTER STATUS")[0][:2]
    deadline = time.time() + timeout
    while True:
        status = replica.named_row("SHOW SLAVE STATUS")
        applied = (status["Relay_Master_Log_File"], int(status["Exec_Master_Log_Pos"]))
        if applied >= (log, int(pos)) or status["Slave_SQL_Running"] != "Yes" \
                or time.time() > deadline:
            return status
        time.sleep(0.05)


class Client:
    """One `mariadb` process fed a script on stdin, its output read line by
    line by a thread of its own as it comes, each line with the time it
    arrived, so that many run at once for their whole run."""

    def __init__(self, server, script, user="root", database=None):
        self.lines = []
        self.proc = subprocess.Popen(server.client(user, database), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.writer = threading.Thread(target=self._write, args=(script,), daemon=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.writer.start()
        self.reader.start()

    def _write(self, script):
        try:
            self.proc.stdin.write(script)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append((time.time(), line.rstrip("\n")))

    def wait(self):
        self.proc.wait()
        self.reader.join()
        self.writer.join(timeout=5)
        return self.proc.returncode

    def stderr(self):
        return self.proc.stderr.read()


def temp_dir():
    tmp = tempfile.mkdtemp(prefix="snowflake-mariadb.")
    os.chmod(tmp, 0o755)
    return tmp

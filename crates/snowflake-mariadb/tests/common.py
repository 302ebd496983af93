"""What the rooms of server.py share: the run (its libraries and servers,
made as the tests need them and stopped at the end), the node every
issuing server is given, the layout's arithmetic written out apart from
the core so that the tests check it, and small helpers."""

import os
import shutil
import time

from support import Server, build, temp_dir

FIELDS = "datacenter=1,machine=7"
TWITTER_EPOCH = 1288834974657
CONNECTIONS = 16
ROWS = 20_000


def node_and_time(id_):
    return ((id_ >> 17) & 31, (id_ >> 12) & 31), (id_ >> 22) + TWITTER_EPOCH


def now_ms():
    return time.time_ns() // 1_000_000


def expect(cond, message):
    if not cond:
        raise AssertionError(message)


def expect_in(part, text):
    expect(part in text, f"{part!r} not in {text!r}")


class Run:
    """The libraries and the servers of one run, made as the tests need them
    and stopped at the end. SNOWFLAKE_MARIADB_LIBRARY and
    SNOWFLAKE_MARIADB_TEST_CLOCK_LIBRARY name libraries built elsewhere (an
    older commit's, to see a new test fail) instead of building this
    checkout's."""

    def __init__(self):
        self.tmp = temp_dir()
        self.servers = []
        self._production = None
        self._test_clock = None
        self._main = None
        self._shared = {}

    def _library(self, name, env, features):
        built = os.environ.get(env) or build(features)
        path = os.path.join(self.tmp, name)
        shutil.copy(built, path)
        return path

    def production(self):
        if self._production is None:
            self._production = self._library("production.so", "SNOWFLAKE_MARIADB_LIBRARY", None)
        return self._production

    def test_clock(self):
        if self._test_clock is None:
            self.production()
            self._test_clock = self._library("test-clock.so", "SNOWFLAKE_MARIADB_TEST_CLOCK_LIBRARY",
                                             "test-clock")
        return self._test_clock

    def server(self, name, library=None, options=(), defaults_file=None):
        server = Server(self.tmp, name, library or self.production(), options, defaults_file)
        self.servers.append(server)
        return server

    def shared(self, name, make):
        """The server `make()` returns, made once per run under `name`."""
        if name not in self._shared:
            self._shared[name] = make()
        return self._shared[name]

    def main(self):
        """The production library with a node, binary logging on (ROW), the
        functions installed."""
        if self._main is None:
            self._main = self.server("main", options=[
                f"snowflake-fields={FIELDS}", "log-bin=binlog", "server-id=1",
                "binlog-format=ROW"]).start()
            self._main.install_functions()
        return self._main

    def close(self):
        for server in self.servers:
            server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def insert_script(rows, begin=False):
    lines = ["BEGIN;"] if begin else []
    lines += [f"INSERT INTO t (b) VALUES ({i}) RETURNING id;" for i in range(rows)]
    return "\n".join(lines) + "\n"


def make_table(server, db, engine="InnoDB"):
    server.sql(f"""CREATE DATABASE {db};
CREATE TABLE {db}.t (id BIGINT NOT NULL PRIMARY KEY DEFAULT snowflake_next_id(),
  b INT NOT NULL) ENGINE={engine};""")


def ids_of(server, table, order="b"):
    return [r[0] for r in server.sql(f"SELECT id FROM {table} ORDER BY {order}")]

"""The loadable function on real MariaDB servers: `scripts/mariadb-function
test` runs this. Each test is a function below; the last line is
`N passed, N failed`. Run one with its name: `server.py test_load`."""

import json
import re
import os
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(__file__))
from support import ROOT, Client, Server, SqlError, build, temp_dir  # noqa: E402

# The node every issuing server here is given, and the layout's arithmetic,
# written out apart from the core so that the test checks it.
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
    and stopped at the end."""

    def __init__(self):
        self.tmp = temp_dir()
        self.servers = []
        self._production = None
        self._test_clock = None
        self._main = None

    def production(self):
        if self._production is None:
            built = build()
            self._production = os.path.join(self.tmp, "production.so")
            shutil.copy(built, self._production)
        return self._production

    def test_clock(self):
        if self._test_clock is None:
            self.production()
            built = build("test-clock")
            self._test_clock = os.path.join(self.tmp, "test-clock.so")
            shutil.copy(built, self._test_clock)
        return self._test_clock

    def server(self, name, library=None, options=()):
        server = Server(self.tmp, name, library or self.production(), options)
        self.servers.append(server)
        return server

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


def make_table(server, db):
    server.sql(f"""CREATE DATABASE {db};
CREATE TABLE {db}.t (id BIGINT NOT NULL PRIMARY KEY DEFAULT snowflake_next_id(),
  b INT NOT NULL) ENGINE=InnoDB;""")


def test_load(run):
    """16 connections insert 20,000 rows each at once, the ID the primary
    key's default: no duplicate, every row there, every ID of the node and
    of the time it was made in."""
    server = run.main()
    make_table(server, "loadtest")
    before = now_ms()
    clients = [Client(server, insert_script(ROWS), database="loadtest") for _ in range(CONNECTIONS)]
    for c in clients:
        expect(c.wait() == 0, f"a client failed: {c.stderr()}")
    after = now_ms()
    ids = [int(line) for c in clients for _, line in c.lines]
    expect(len(ids) == CONNECTIONS * ROWS, f"{len(ids)} IDs returned")
    expect(len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} duplicates")
    stored = {int(r[0]) for r in server.sql("SELECT id FROM loadtest.t")}
    expect(stored == set(ids), "the table holds other IDs than the clients were given")
    for id_ in ids:
        node, at = node_and_time(id_)
        expect(node == (1, 7), f"ID {id_} has node {node}")
        expect(before <= at <= after, f"ID {id_} has time {at}, outside {before}..{after}")
    # Each client's IDs increase, and the clients ran at once: every one
    # had its first answer before any had its last.
    for c in clients:
        own = [int(line) for _, line in c.lines]
        expect(own == sorted(own), "a connection's IDs went down")
    first = max(c.lines[0][0] for c in clients)
    last = min(c.lines[-1][0] for c in clients)
    expect(first < last, "the connections did not run at the same time")
    print(f"  {len(ids)} IDs from {CONNECTIONS} connections in {after - before} ms, "
          f"all at once for {int((last - first) * 1000)} ms")


def load_then_kill(server, db):
    """16 connections inserting into db.t, half inside a transaction never
    committed, until 20,000 IDs have come back; then kill -9 of mariadbd.
    Every ID a client was handed."""
    clients = [Client(server, insert_script(ROWS, begin=(i % 2 == 0)), database=db)
               for i in range(CONNECTIONS)]
    deadline = time.time() + 30
    while sum(len(c.lines) for c in clients) < 20_000 and time.time() < deadline:
        time.sleep(0.05)
    server.stop(crash=True)
    for c in clients:
        c.wait()
    return [int(line) for c in clients for _, line in c.lines]


def test_kill_9_mid_load(run):
    """kill -9 of mariadbd while 16 connections insert, half of them inside
    a transaction never committed: after the restart every new ID lies above
    every ID any client was handed."""
    server = run.main()
    make_table(server, "crash")
    seen = load_then_kill(server, "crash")
    expect(len(seen) >= 20_000, f"only {len(seen)} IDs seen before the kill")
    server.start()
    new = [int(r[0]) for r in server.sql("SELECT snowflake_next_id();\n" * 200)]
    new += [int(r[0]) for r in server.sql(insert_script(200), database="crash")]
    expect(min(new) > max(seen),
           f"after the restart {min(new)} was issued, at or below {max(seen)} seen before")
    committed = int(server.value("SELECT COUNT(*) FROM crash.t"))
    print(f"  {len(seen)} IDs seen before the kill ({committed} rows survive), "
          f"the first after it {min(new) - max(seen)} above the last")


def test_kill_9_then_clock_behind(run):
    """kill -9 mid-load, then the clock half a second behind the last ID a
    client saw when the restarted server first issues: only the stored mark
    stands between it and those IDs. It must wait past them or refuse,
    never issue at or below one."""
    server = run.server("crashclock", run.test_clock(), [f"snowflake-fields={FIELDS}"]).start()
    server.install_functions()
    make_table(server, "crash")
    seen = load_then_kill(server, "crash")
    last_ms = node_and_time(max(seen))[1]
    server.start()
    server.sql(f"SET GLOBAL snowflake_test_clock_offset_ms = {last_ms - now_ms() - 500}")
    try:
        new = [int(r[0]) for r in server.sql("SELECT snowflake_next_id();\n" * 50)]
        expect(min(new) > max(seen), f"{min(new)} issued after the restart, at or below "
               f"{max(seen)} seen before")
        print(f"  waited past the mark: the first ID {min(new) - max(seen)} above the last seen")
    except SqlError as err:
        expect_in("behind the high-water mark", str(err))
        server.sql("SET GLOBAL snowflake_test_clock_offset_ms = 0")
        expect(int(server.value("SELECT snowflake_next_id()")) > max(seen), "issued below")
        print("  refused while the clock was behind the mark")
    server.stop()


def test_clock_step_back(run):
    """A clock set back: within the tolerance waited out, beyond it refused
    with the size of the step, issuing again once the clock is past; a
    restart with the clock far behind the mark is refused. The clock is the
    test build's; test_production_clock shows the real build has no such
    knob."""
    server = run.server("clock", run.test_clock(),
                        [f"snowflake-fields={FIELDS}"]).start()
    server.install_functions()
    last = int(server.value("SELECT snowflake_next_id()"))
    server.sql("SET GLOBAL snowflake_test_clock_offset_ms = -2000")
    message = server.error("SELECT snowflake_next_id()")
    step = re.search(r"backwards by (\d+) ms", message)
    expect(step and 1000 <= int(step.group(1)) <= 2000, f"no step of about 2 s in {message}")
    server.sql("SET GLOBAL snowflake_test_clock_offset_ms = -3")
    waited = int(server.value("SELECT snowflake_next_id()"))
    expect(waited > last, "an ID after a 3 ms step is not above the last")
    server.sql("SET GLOBAL snowflake_test_clock_offset_ms = 0")
    after = int(server.value("SELECT snowflake_next_id()"))
    expect(after > waited, "the ID after the clock came back is not above the last")
    server.stop()
    server.start(["snowflake-test-clock-offset-ms=-120000"])
    message = server.error("SELECT snowflake_next_id()")
    expect_in("snowflake_next_id: ", message)
    expect_in("behind the high-water mark", message)
    server.sql("SET GLOBAL snowflake_test_clock_offset_ms = 0")
    expect(int(server.value("SELECT snowflake_next_id()")) > after,
           "the ID after the refused restart is not above the last")
    server.stop()


def test_production_clock(run):
    """The library the installer builds has no clock setting: it reads the
    system clock, as an ID's time shows."""
    server = run.main()
    expect(server.sql("SHOW VARIABLES LIKE 'snowflake_test%'") == [],
           "the production library declares a test variable")
    with open(run.production(), "rb") as f:
        expect(b"test_clock_offset_ms" not in f.read(), "the production library has a test clock")
    with open(run.test_clock(), "rb") as f:
        expect(b"test_clock_offset_ms" in f.read(), "the search above cannot fail")
    before = now_ms()
    id_ = int(server.value("SELECT snowflake_next_id()"))
    after = now_ms()
    _, at = node_and_time(id_)
    expect(before <= at <= after, f"ID time {at} not within {before}..{after}")


def test_two_servers_one_mark_file(run):
    """A second server pointed at the first one's mark file is refused while
    the first holds it, and issues once the first has stopped."""
    first = run.main()
    first.value("SELECT snowflake_next_id()")
    mark = os.path.join(first.data, "snowflake.mark")
    expect(os.path.exists(mark), "no mark file in the data directory")
    second = run.server("second", options=[f"snowflake-fields={FIELDS}",
                                           f"snowflake-state-file={mark}"]).start()
    second.install_functions()
    message = second.error("SELECT snowflake_next_id()")
    expect_in("is in use by process", message)
    expect_in(mark, message)
    first.stop()
    expect(int(second.value("SELECT snowflake_next_id()")) > 0, "the second did not issue")
    second.stop()
    first.start()


def test_privileges(run):
    """Only users granted EXECUTE on snowflake.next_id (themselves, through a
    role, or as a trigger's definer) issue; no one can change the settings
    or the mark from SQL."""
    server = run.main()
    server.sql("""CREATE DATABASE priv;
CREATE TABLE priv.t (id BIGINT NOT NULL PRIMARY KEY, b INT);
CREATE USER app@localhost, other@localhost, via_role@localhost, owner@localhost;
CREATE ROLE issuer;
GRANT ALL ON priv.* TO app@localhost, other@localhost, via_role@localhost, owner@localhost;
GRANT EXECUTE ON FUNCTION snowflake.next_id TO app@localhost;
GRANT EXECUTE ON FUNCTION snowflake.next_id TO issuer;
GRANT issuer TO via_role@localhost;""")
    message = server.error("SELECT snowflake_next_id()", user="other")
    expect_in("'other' may not issue IDs", message)
    expect_in("GRANT EXECUTE ON FUNCTION snowflake.next_id", message)
    expect_in("may not issue", server.error("INSERT INTO priv.t VALUES (snowflake_next_id(), 1)",
                                            user="other"))
    expect(int(server.value("SELECT snowflake_next_id()", user="app")) > 0, "app refused")
    expect(int(server.value("SELECT snowflake.next_id()", user="app")) > 0, "app refused")
    expect_in("may not issue", server.error("SELECT snowflake_next_id()", user="via_role"))
    expect(int(server.value("SET ROLE issuer; SELECT snowflake_next_id()", user="via_role")) > 0,
           "the role's member refused")
    # A trigger runs as its definer: granted owner, any inserter; not granted, none.
    server.sql("""CREATE DEFINER = owner@localhost TRIGGER priv.t_id BEFORE INSERT ON priv.t
FOR EACH ROW SET NEW.id = snowflake_next_id();""")
    expect_in("'owner' may not issue", server.error("INSERT INTO priv.t (b) VALUES (1)",
                                                      user="other"))
    server.sql("GRANT EXECUTE ON FUNCTION snowflake.next_id TO owner@localhost")
    server.sql("INSERT INTO priv.t (b) VALUES (2)", user="other")
    server.sql("REVOKE EXECUTE ON FUNCTION snowflake.next_id FROM app@localhost")
    expect_in("may not issue", server.error("SELECT snowflake_next_id()", user="app"))
    # The settings are read-only, for root too; the functions and the mark
    # file are out of reach.
    for var in ("snowflake_fields", "snowflake_layout", "snowflake_state_file"):
        expect_in("read only", server.error(f"SET GLOBAL {var} = 'machine=1'"))
    expect_in("denied", server.error("DROP FUNCTION snowflake_next_id", user="app"))
    expect_in("denied", server.error("CREATE OR REPLACE FUNCTION snowflake.next_id() RETURNS "
                                     "BIGINT RETURN 1", user="app"))
    mark = os.path.join(server.data, "snowflake.mark")
    expect_in("denied", server.error(f"SELECT 1 INTO OUTFILE '{mark}'", user="app"))
    expect_in("exists", server.error(f"SELECT 1 INTO OUTFILE '{mark}'"))


def test_forgotten_node(run):
    """No node, part of one, a value out of range: refused, naming what to
    set; never node 0."""
    server = run.server("nonode").start()
    server.install_functions()
    message = server.error("SELECT snowflake_next_id()")
    expect_in("no node is set", message)
    expect_in("snowflake_fields", message)
    expect_in("datacenter=N,machine=N", message)
    expect(not os.path.exists(os.path.join(server.data, "snowflake.mark")),
           "a mark file was made without a node")
    server.stop()
    server.start(["snowflake-fields=machine=7"])
    expect_in("datacenter not given", server.error("SELECT snowflake_next_id()"))
    server.stop()
    server.start(["snowflake-fields=datacenter=1,machine=32"])
    expect_in("machine 32 is out of range: 0 to 31",
              server.error("SELECT snowflake_next_id()"))
    server.stop()
    server.start(["snowflake-fields=datacenter=1,machine=7", "snowflake-layout=time:43,node:9,seq:12"])
    expect_in("largest BIGINT", server.error("SELECT snowflake_next_id()"))
    server.stop()


def test_statement_based_binlog(run):
    """Refused while statements are logged as statements; issued under ROW
    and MIXED (which logs the statement as rows) and with logging off."""
    server = run.main()
    make_table(server, "binlog")
    expect_in("binlog_format=STATEMENT", server.error(
        "SET SESSION binlog_format = 'STATEMENT'; SELECT snowflake_next_id()"))
    expect_in("binlog_format=STATEMENT", server.error(
        "SET SESSION binlog_format = 'STATEMENT'; INSERT INTO binlog.t (b) VALUES (1)"))
    log = server.value("SHOW MASTER STATUS")
    server.sql("SET SESSION binlog_format = 'MIXED'; INSERT INTO binlog.t (b) VALUES (2)")
    kinds = [r[2] for r in server.sql(f"SHOW BINLOG EVENTS IN '{log}'")]
    expect(any(k.startswith("Write_rows") for k in kinds), f"MIXED logged no rows: {kinds[-8:]}")
    server.sql("SET SESSION binlog_format = 'STATEMENT'; SET SESSION sql_log_bin = 0; "
               "SELECT snowflake_next_id()")


def test_vectors(run):
    """The shared vectors through the read functions."""
    server = run.main()
    with open(os.path.join(ROOT, "testdata", "vectors.json")) as f:
        vectors = json.load(f)
    checked = 0
    for case in vectors["compose"]:
        layout, ms, fields, id_ = case["layout"], case["timestamp_ms"], case["fields"], case["id"]
        # Past the largest BIGINT; an epoch or tick of its own: the layout
        # argument names a preset or spec, the server's options set those
        # (test_configured_layout).
        if int(id_) > 2**63 - 1 or "epoch_ms" in case or "tick_ms" in case:
            continue
        text = ",".join(f"{k}={v}" for k, v in fields.items())
        row = server.sql(
            f"SELECT snowflake_compose({ms}, '{text}', '{layout}'), "
            f"snowflake_timestamp_ms({id_}, '{layout}'), snowflake_decode({id_}, '{layout}')")[0]
        expect(row[0] == id_, f"compose {case}: {row[0]}")
        expect(int(row[1]) == ms, f"timestamp of {case}: {row[1]}")
        decoded = json.loads(row[2])
        expect(decoded["id"] == id_ and decoded["timestamp_ms"] == ms
               and decoded["fields"] == fields and decoded["layout"] == layout,
               f"decode of {case}: {decoded}")
        for name, value in fields.items():
            got = server.value(f"SELECT snowflake_field({id_}, '{name}', '{layout}')")
            expect(int(got) == value, f"{name} of {case}: {got}")
        for form, encoded in case["text"].items():
            row = server.sql(f"SELECT snowflake_to_text({id_}, '{form}'), "
                             f"snowflake_from_text('{encoded}', '{form}')")[0]
            expect(row == [encoded, id_], f"{form} of {case}: {row}")
        checked += 1
    expect(checked >= 5, f"only {checked} vectors checked")
    for case in vectors["errors"]:
        if case.get("op") != "compose":
            continue
        text = ",".join(f"{k}={v}" for k, v in case["fields"].items())
        message = server.error(f"SELECT snowflake_compose({case['timestamp_ms']}, '{text}', "
                               f"'{case['layout']}')")
        expect_in(f"snowflake_compose: {case['field']} ", message)
        expect_in(case["value"], message)
    # The default layout is the server's; DATETIME in and out, in UTC.
    row = server.sql("SELECT snowflake_time(4194439168), "
                     "snowflake_compose('2010-11-04 01:42:55.657', 'datacenter=1,machine=1,sequence=0'), "
                     "snowflake_min_id('2010-11-04 01:42:55.657'), "
                     "snowflake_max_id('2010-11-04 01:42:55.657'), snowflake_field(NULL, 'machine')")[0]
    expect(row == ["2010-11-04 01:42:55.657", "4194439168", str(1000 << 22),
                   str((1000 << 22) | ((1 << 22) - 1)), "NULL"], f"{row}")
    # min_id and max_id of a constant are computed once, so an index range
    # scan can use them.
    make_table(server, "bounds")
    plan = server.sql("EXPLAIN SELECT * FROM bounds.t WHERE id BETWEEN "
                      "snowflake_min_id('2025-01-01') AND snowflake_max_id('2025-01-02')")
    expect(plan[0][3] == "range", f"no range scan: {plan}")
    print(f"  {checked} compose vectors, every text form, the compose errors")


def test_usage_errors(run):
    """Wrong argument counts and bad layouts are SQL errors that say what is allowed."""
    server = run.main()
    expect_in("snowflake_field(id, field [, layout])",
              server.error("SELECT snowflake_field(1)"))
    expect_in("takes no arguments", server.error("SELECT snowflake_next_id(1)"))
    expect_in("snowflake_decode: ", server.error("SELECT snowflake_decode(1, 'nope')"))
    expect_in("snowflake_to_text: ", server.error("SELECT snowflake_to_text(1, 'base64')"))


def test_configured_layout(run):
    """The vectors whose layout has an epoch and a tick of its own, through
    a server whose options set them: its read functions' default and its
    generator's layout."""
    with open(os.path.join(ROOT, "testdata", "vectors.json")) as f:
        cases = [c for c in json.load(f)["compose"] if "epoch_ms" in c and "tick_ms" in c]
    expect(cases, "no vector with an epoch and a tick of its own")
    first = cases[0]
    cases = [c for c in cases if (c["layout"], c["epoch_ms"], c["tick_ms"])
             == (first["layout"], first["epoch_ms"], first["tick_ms"])]
    node = ",".join(f"{f.split(':')[0]}=3" for f in first["layout"].split(",")[1:]
                    if f.split(":")[0] != "sequence")
    server = run.server("custom", options=[
        f"snowflake-layout={first['layout']}", f"snowflake-epoch={first['epoch_ms']}",
        f"snowflake-tick-ms={first['tick_ms']}", f"snowflake-fields={node}"]).start()
    server.install_functions()
    for case in cases:
        text = ",".join(f"{k}={v}" for k, v in case["fields"].items())
        row = server.sql(f"SELECT snowflake_compose({case['timestamp_ms']}, '{text}'), "
                         f"snowflake_timestamp_ms({case['id']})")[0]
        expect(row == [case["id"], str(case["timestamp_ms"])], f"{case}: {row}")
    decoded = json.loads(server.value("SELECT snowflake_decode(snowflake_next_id())"))
    expect(decoded["layout"] == first["layout"], f"{decoded}")
    expect(all(v == 3 for k, v in decoded["fields"].items() if k != "sequence"), f"{decoded}")
    server.stop()
    print(f"  {len(cases)} vectors of {first['layout']}, epoch {first['epoch_ms']}, "
          f"tick {first['tick_ms']} ms")


TESTS = [test_load, test_kill_9_mid_load, test_kill_9_then_clock_behind, test_clock_step_back, test_production_clock,
         test_two_servers_one_mark_file, test_privileges, test_forgotten_node,
         test_statement_based_binlog, test_vectors, test_configured_layout, test_usage_errors]


def main(names):
    chosen = [t for t in TESTS if not names or t.__name__ in names]
    run = Run()
    passed = failed = 0
    try:
        for test in chosen:
            started = time.time()
            try:
                test(run)
                passed += 1
                print(f"ok   {test.__name__} ({time.time() - started:.1f} s)", flush=True)
            except Exception:  # noqa: BLE001 - every failure is reported, then the next test runs
                failed += 1
                print(f"FAIL {test.__name__}", flush=True)
                traceback.print_exc()
                for server in run.servers:
                    if server.proc is not None:
                        print(f"--- {server.dir} log\n{server.tail()}")
    finally:
        run.close()
    print(f"\n{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

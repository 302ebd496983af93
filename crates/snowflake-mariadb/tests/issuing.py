"""Issuing IDs: under load, across kill -9, with the clock set back, with
two servers on one mark file, without a node, with a state file outside the
data directory or a damaged one."""

import os
import re
import time

from common import (CONNECTIONS, FIELDS, ROWS, expect, expect_in, insert_script, make_table,
                    node_and_time, now_ms)
from support import Client, SqlError


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
    """kill -9 mid-load, then a restart with the clock half a second behind
    the last ID a client saw (the generator starts with the plugin, so the
    clock is set back from the start): only the stored mark stands between
    it and those IDs. It must wait past them or refuse, never issue at or
    below one."""
    server = run.server("crashclock", run.test_clock(), [f"snowflake-fields={FIELDS}"]).start()
    server.install_functions()
    make_table(server, "crash")
    seen = load_then_kill(server, "crash")
    last_ms = node_and_time(max(seen))[1]
    server.start([f"snowflake-test-clock-offset-ms={last_ms - now_ms() - 500}"])
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
    with the size of the step, issuing again once the clock is past, through
    a column DEFAULT too (its refusal fails that statement only); a restart
    with the clock far behind the mark is refused. The clock is the test
    build's; test_production_clock shows the real build has no such knob."""
    server = run.server("clock", run.test_clock(),
                        [f"snowflake-fields={FIELDS}"]).start()
    server.install_functions()
    make_table(server, "stepped")
    last = int(server.value("INSERT INTO stepped.t (b) VALUES (1) RETURNING id"))
    server.sql("SET GLOBAL snowflake_test_clock_offset_ms = -2000")
    message = server.error("SELECT snowflake_next_id()")
    step = re.search(r"backwards by (\d+) ms", message)
    expect(step and 1000 <= int(step.group(1)) <= 2000, f"no step of about 2 s in {message}")
    expect_in("backwards by", server.error("INSERT INTO stepped.t (b) VALUES (2)"))
    server.sql("SET GLOBAL snowflake_test_clock_offset_ms = -3")
    waited = int(server.value("INSERT INTO stepped.t (b) VALUES (3) RETURNING id"))
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
    """A second server that reaches the first one's mark file (through a
    directory linked into its own data directory: the state file must lie
    inside it) is refused while the first holds it, and issues once the
    first has stopped."""
    first = run.main()
    first.value("SELECT snowflake_next_id()")
    mark = os.path.join(first.data, "snowflake.mark")
    expect(os.path.exists(mark), "no mark file in the data directory")
    second = run.server("second", options=[f"snowflake-fields={FIELDS}",
                                           "snowflake-state-file=shared/snowflake.mark"])
    os.symlink(first.data, os.path.join(second.data, "shared"))
    second.start()
    second.install_functions()
    message = second.error("SELECT snowflake_next_id()")
    expect_in("is in use by process", message)
    expect_in("shared/snowflake.mark", message)
    first.stop()
    expect(int(second.value("SELECT snowflake_next_id()")) > 0, "the second did not issue")
    second.stop()
    first.start()


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


def test_mark_file_from_the_start(run):
    """A server with a node makes its mark file as the plugin starts, before
    it takes connections, so a user with FILE can never plant one with
    SELECT ... INTO OUTFILE (which makes only new files); a server without a
    node makes none."""
    server = run.server("markstart", options=[f"snowflake-fields={FIELDS}"]).start()
    mark = os.path.join(server.data, "snowflake.mark")
    expect(os.path.exists(mark), "no mark file right after the start, before any call")
    expect_in("snowflake_next_id() issues with layout twitter", server.tail(30))
    server.sql("CREATE USER filer@localhost; GRANT FILE ON *.* TO filer@localhost")
    expect_in("already exists", server.error(
        f"SELECT 'snowflake-mark v2 forged' INTO OUTFILE '{mark}'", user="filer"))
    server.install_functions()
    expect(int(server.value("SELECT snowflake_next_id()")) > 0, "no ID after the start")
    server.stop()


def test_state_file_and_damaged_mark(run):
    """A state file outside the data directory is refused naming the option
    and nothing is written there; a damaged mark is refused with what to do
    instead of deleting it."""
    server = run.server("statefile", options=[f"snowflake-fields={FIELDS}"]).start()
    server.install_functions()
    server.value("SELECT snowflake_next_id()")
    server.stop()
    for given in ["../escape.mark", "/tmp/snowflake-escape.mark", "marks/../../escape.mark"]:
        server.start([f"snowflake-state-file={given}"])
        message = server.error("SELECT snowflake_next_id()")
        expect_in(f'snowflake_state_file "{given}"', message)
        expect_in("is not inside the data directory", message)
        server.stop()
    for escaped in [os.path.join(server.dir, "escape.mark"), "/tmp/snowflake-escape.mark"]:
        expect(not os.path.exists(escaped), f"{escaped} was written")
    mark = os.path.join(server.data, "snowflake.mark")
    with open(mark) as f:
        text = f.read()
    with open(mark, "w") as f:
        f.write(text.replace("mark=1", "mark=2", 1))
    server.start()
    message = server.error("SELECT snowflake_next_id()")
    expect_in("it is corrupt", message)
    expect_in("Do not delete the mark file, or start from a new one", message)
    expect_in("moved aside only with the server stopped", message)
    server.stop()

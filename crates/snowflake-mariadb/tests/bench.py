"""snowflake_next_id() against NEXTVAL() of a sequence and the plain-SQL
generator (`snowflake sql --dialect mysql --generator`) on one private
server, in the same rounds: `scripts/mariadb-function bench [ROUNDS]`.

Per round and per connection count, each query runs through mariadb-slap
in turn; the order rotates from round to round. `SELECT 1` is the floor:
a statement's round trip with no function at all. Then one statement that
makes 200,000 IDs (MAX, which must read every one), which shows each function's own cost without the round
trip. Medians and the spread (lowest to highest) of the rounds."""

import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from support import ROOT, Server, build, temp_dir  # noqa: E402

QUERIES = 20_000
BULK = 200_000


def snowflake_cli():
    given = os.environ.get("SNOWFLAKE_BIN")
    if given:
        return given
    subprocess.run(["nice", "-n", "10", "cargo", "build", "--release", "-q", "-p", "snowflake-cli"],
                   cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "snowflake")


# BENCH_AS=app runs every statement as a user granted EXECUTE on
# snowflake.next_id and rights on the bench database, instead of root,
# whose global rights pass the privilege check without a lookup.
USER = os.environ.get("BENCH_AS", "root")


def slap(server, query, concurrency):
    """IDs (statements) a second, all clients together."""
    out = subprocess.run(
        ["mariadb-slap", "--no-defaults", f"--socket={server.sock}", "-u", USER,
         f"--concurrency={concurrency}", "--iterations=1",
         f"--number-of-queries={QUERIES}", "--create-schema=bench", "--no-drop",
         f"--query={query}"], check=True, capture_output=True, text=True).stdout
    seconds = float(re.search(r"Average number of seconds to run all queries: ([0-9.]+)",
                              out).group(1))
    return QUERIES / seconds


def bulk(server, expression):
    started = time.perf_counter()
    server.sql(f"SELECT MAX({expression}) FROM seq_1_to_{BULK}", database="bench")
    return BULK / (time.perf_counter() - started)


def main(argv):
    rounds = int(argv[0]) if argv else 5
    tmp = temp_dir()
    server = Server(tmp, "bench", build(), ["snowflake-fields=datacenter=1,machine=7",
                                             "skip-log-bin", "performance-schema=ON",
                                             "performance-schema-instrument=wait/synch/%=ON"])
    try:
        server.start()
        server.install_functions()
        script = subprocess.run(
            [snowflake_cli(), "sql", "--dialect", "mysql", "--generator", "--prefix", "sqlgen",
             "-f", "datacenter=1", "-f", "machine=8"], check=True, capture_output=True,
            text=True).stdout
        server.sql("CREATE DATABASE bench; CREATE SEQUENCE bench.s CACHE 1000;")
        server.sql(script, database="bench")
        if USER != "root":
            server.sql(f"CREATE USER {USER}@localhost; GRANT ALL ON bench.* TO {USER}@localhost; "
                       f"GRANT EXECUTE ON FUNCTION snowflake.next_id TO {USER}@localhost;")
        queries = {
            "SELECT 1 (the floor)": "SELECT 1",
            "snowflake_next_id()": "SELECT snowflake_next_id()",
            "NEXTVAL(s)": "SELECT NEXTVAL(s)",
            "plain-SQL sqlgen_next_id()": "SELECT sqlgen_next_id()",
        }
        bulks = {
            "snowflake_next_id()": "snowflake_next_id()",
            "NEXTVAL(s)": "NEXTVAL(s)",
            "plain-SQL sqlgen_next_id()": "sqlgen_next_id()",
        }
        rates = {(name, c): [] for name in queries for c in (1, 16)}
        ratios = {c: [] for c in (1, 16)}
        bulk_rates = {name: [] for name in bulks}
        names = list(queries)
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for c in (1, 16):
                got = {}
                for name in order:
                    got[name] = slap(server, queries[name], c)
                    rates[(name, c)].append(got[name])
                ratios[c].append(got["snowflake_next_id()"] / got["NEXTVAL(s)"])
            for name, expr in bulks.items():
                bulk_rates[name].append(bulk(server, expr))
            print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
        print(f"{rounds} rounds of {QUERIES} statements as {USER}, MariaDB "
              f"{server.value('SELECT VERSION()')}, {os.cpu_count()} cores\n")
        print("| query | connections | statements/s, median | lowest – highest |")
        print("| --- | ---: | ---: | ---: |")
        for (name, c), values in rates.items():
            print(f"| `{name}` | {c} | {statistics.median(values):,.0f} | "
                  f"{min(values):,.0f} – {max(values):,.0f} |")
        print()
        for c, values in ratios.items():
            print(f"snowflake_next_id() / NEXTVAL() at {c}: median {statistics.median(values):.2f}"
                  f" (rounds {min(values):.2f} – {max(values):.2f})")
        print(f"\nOne statement making {BULK:,} IDs (SELECT MAX(f) FROM seq_1_to_{BULK}):\n")
        print("| function | IDs/s, median | lowest – highest |")
        print("| --- | ---: | ---: |")
        for name, values in bulk_rates.items():
            print(f"| `{name}` | {statistics.median(values):,.0f} | "
                  f"{min(values):,.0f} – {max(values):,.0f} |")
        print("\nWhere 16 connections wait (performance_schema, one run of each, "
              "the synchronisation objects waited on longest):\n")
        for name in ("snowflake_next_id()", "NEXTVAL(s)"):
            server.sql("TRUNCATE performance_schema.events_waits_summary_global_by_event_name")
            slap(server, queries[name], 16)
            waits = server.sql(
                "SELECT EVENT_NAME, COUNT_STAR, ROUND(SUM_TIMER_WAIT / 1e9) FROM "
                "performance_schema.events_waits_summary_global_by_event_name "
                "WHERE EVENT_NAME LIKE 'wait/synch/%' AND COUNT_STAR > 0 "
                "ORDER BY SUM_TIMER_WAIT DESC LIMIT 4")
            for event, count, ms in waits:
                print(f"- `{name}`: `{event}` {int(count):,} waits, {ms} ms in all")
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])

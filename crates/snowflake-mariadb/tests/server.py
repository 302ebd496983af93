"""The loadable function on real MariaDB servers: `scripts/mariadb-function
test` runs this. The tests live in rooms, each a module of its own;
`common.py` holds the run they share, `support.py` the servers. The last
line is `N passed, N failed`. Run some by name: `server.py test_load`."""

import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(__file__))
import issuing  # noqa: E402  load, kill -9, the clock, the mark file, the node
import lifecycle  # noqa: E402  uninstall and reinstall, the installer
import privileges  # noqa: E402  EXECUTE on snowflake.next_id, and opening tables without it
import reading  # noqa: E402  the read functions: vectors, layouts, argument types
import replication  # noqa: E402  the binary log, DDL, prepared statements, replicas
from common import Run  # noqa: E402

TESTS = [
    issuing.test_load, issuing.test_kill_9_mid_load, issuing.test_kill_9_then_clock_behind,
    issuing.test_clock_step_back, issuing.test_production_clock,
    issuing.test_two_servers_one_mark_file, issuing.test_forgotten_node,
    issuing.test_mark_file_from_the_start, issuing.test_state_file_and_damaged_mark,
    privileges.test_privileges, privileges.test_opening_a_table_needs_no_right_to_issue,
    replication.test_statement_based_binlog, replication.test_replication,
    reading.test_vectors, reading.test_configured_layout, reading.test_usage_errors,
    reading.test_constant_numbers_where_text_is_due,
    lifecycle.test_uninstall_keeps_the_settings,
    lifecycle.test_every_function_dropped_and_created_again,
    lifecycle.test_reinstall_with_other_options, lifecycle.test_installer,
]


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

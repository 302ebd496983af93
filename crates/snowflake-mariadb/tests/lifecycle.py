"""The library's life in a running server: the plugin uninstalled and
installed again while functions run, every function dropped and created
again, and the installer run against a server."""

import os
import subprocess
import threading
import time

from common import expect, expect_in, node_and_time, now_ms
from support import ROOT, Client, functions_sql

LAYOUT = "time:41,node:10,sequence:12"
EPOCH = 1420070400000


def timestamp_ms(id_):
    return (id_ >> 22) + EPOCH


def lifecycle_server(run):
    """A server with a layout, epoch and node of its own, so that a read
    function that lost them would answer in twitter's."""
    def make():
        server = run.server("lifecycle", options=[
            f"snowflake-layout={LAYOUT}", f"snowflake-epoch={EPOCH}",
            "snowflake-fields=node=5"]).start()
        server.install_functions()
        return server
    return run.shared("lifecycle", make)


def test_uninstall_keeps_the_settings(run):
    """UNINSTALL SONAME frees the plugin's option strings while the
    functions stay: they go on decoding with the server's layout and
    issuing, and while UNINSTALL and INSTALL SONAME run in a loop, four
    connections that decode with the server's layout get its answer every
    time (never another layout's, nor freed memory's)."""
    server = lifecycle_server(run)
    first = int(server.value("SELECT snowflake_next_id()"))
    want = str(timestamp_ms(first))
    server.sql("UNINSTALL SONAME 'snowflake_mariadb'")
    expect(server.sql("SHOW VARIABLES LIKE 'snowflake%'") == [], "the plugin is still there")
    expect(server.value(f"SELECT snowflake_timestamp_ms({first})") == want,
           "the read functions lost the layout with the plugin")
    expect(int(server.value("SELECT snowflake_next_id()")) > first, "no ID without the plugin")
    server.sql("INSTALL SONAME 'snowflake_mariadb'")

    stop = time.time() + 4
    wrong = []

    def decode():
        while time.time() < stop:
            c = Client(server, f"SELECT snowflake_timestamp_ms({first});\n" * 200)
            c.wait()
            wrong.extend(line for _, line in c.lines if line != want)
    callers = [threading.Thread(target=decode) for _ in range(4)]
    for t in callers:
        t.start()
    churn = 0
    while time.time() < stop:
        server.sql("UNINSTALL SONAME 'snowflake_mariadb'; INSTALL SONAME 'snowflake_mariadb'")
        churn += 1
    for t in callers:
        t.join()
    expect(not wrong, f"{len(wrong)} answers of another layout, such as {wrong[:3]}")
    print(f"  {churn} uninstall/install cycles under 4 decoding connections")


def test_every_function_dropped_and_created_again(run):
    """Every function dropped and the plugin uninstalled, as an upgrade at
    run time would: the library stays loaded, and the functions created
    again issue from the same generator, above the IDs before, with one
    lock on its mark file (not refused by their own server's lock)."""
    server = lifecycle_server(run)
    before = int(server.value("SELECT snowflake_next_id()"))
    for (name,) in server.sql("SELECT name FROM mysql.func"):
        server.sql(f"DROP FUNCTION {name}")
    server.sql("UNINSTALL SONAME 'snowflake_mariadb'")
    with open(f"/proc/{server.proc.pid}/maps") as f:
        expect("snowflake_mariadb.so" in f.read(), "the library was unloaded")
    server.sql("INSTALL SONAME 'snowflake_mariadb'")
    server.install_functions()
    after = int(server.value("SELECT snowflake_next_id()"))
    expect(after > before, f"{after} after the reinstall, not above {before}")
    expect(timestamp_ms(after) >= timestamp_ms(before), "another layout after the reinstall")
    fd_dir = f"/proc/{server.proc.pid}/fd"
    locks = [fd for fd in os.listdir(fd_dir)
             if os.readlink(os.path.join(fd_dir, fd)).endswith("snowflake.mark.lock")]
    expect(len(locks) == 1, f"{len(locks)} descriptors on the lock file")
    server.stop()


def test_reinstall_with_other_options(run):
    """INSTALL SONAME reads the option files again: with another node there
    than the running generator's, it is refused naming both, and the
    functions go on with the generator's settings."""
    options = os.path.join(run.tmp, "reinstall.cnf")
    with open(options, "w") as f:
        f.write("[mariadbd]\nsnowflake-fields = datacenter=1,machine=7\n")
    server = run.server("reinstall", defaults_file=options).start()
    server.install_functions()
    before = int(server.value("SELECT snowflake_next_id()"))
    with open(options, "w") as f:
        f.write("[mariadbd]\nsnowflake-fields = datacenter=2,machine=9\n")
    server.sql("UNINSTALL SONAME 'snowflake_mariadb'")
    message = server.error("INSTALL SONAME 'snowflake_mariadb'")
    expect_in("fields datacenter=1,machine=7", message)
    expect_in("now say layout twitter", message)
    expect_in("fields datacenter=2,machine=9", message)
    expect_in("restart the server to change them", message)
    after = int(server.value("SELECT snowflake_next_id()"))
    expect(after > before and node_and_time(after)[0] == (1, 7),
           f"{after} after the refused reinstall")
    server.stop()


def test_installer(run):
    """scripts/mariadb-function install against a running server: the
    functions, the grant, the mark file in place, and a warning naming the
    accounts that could freeze the generator (ALTER ROUTINE or CREATE
    ROUTINE on snowflake, FILE). Run again, it grants EXECUTE again after a
    DROP FUNCTION took every grant with it, and says that the server must
    restart to load a new build."""
    server = run.server("installer", options=["snowflake-fields=datacenter=3,machine=3"]).start()
    server.sql("""CREATE USER app@localhost, dev@localhost, filer@localhost;
CREATE DATABASE snowflake;
GRANT ALTER ROUTINE, CREATE ROUTINE ON snowflake.* TO dev@localhost;
GRANT FILE ON *.* TO filer@localhost;""")

    def install(library):
        done = subprocess.run([os.path.join(ROOT, "scripts", "mariadb-function"), "install",
                               "--socket", server.sock, "--no-options-file",
                               "--library", library, "--grant", "'app'@'localhost'"],
                              capture_output=True, text=True)
        expect(done.returncode == 0, f"install failed: {done.stdout}{done.stderr}")
        return done.stdout + done.stderr

    said = install(run.production())
    expect_in("snowflake_next_id() issues as", said)
    expect_in(os.path.join(server.data, "snowflake.mark"), said)
    for account in ("'dev'@'localhost'", "'filer'@'localhost'"):
        expect_in(account, said)
    before = now_ms()
    id_ = int(server.value("SELECT snowflake_next_id()", user="app"))
    expect(((id_ >> 22) + 1288834974657) >= before - 1, "app's ID")
    server.sql("DROP FUNCTION snowflake.next_id", user="dev")
    expect_in("may not issue", server.error("SELECT snowflake_next_id()", user="app"))
    # Another build: installed for the next start, said so.
    expect_in("restart it to load the new one", install(run.test_clock()))
    expect(int(server.value("SELECT snowflake_next_id()", user="app")) > id_,
           "app after the installer ran again")
    expect(functions_sql().count("CREATE FUNCTION IF NOT EXISTS") == 10, "ten functions")
    server.stop()

"""The binary log and replication: what is logged as a statement is
refused, DDL included whatever binlog_format says; prepared statements and
views under ROW and MIXED issue; replicas, with a node or none, apply the
primary's rows without ever making an ID."""

from common import FIELDS, expect, expect_in, ids_of, make_table
from support import caught_up, replicate


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
    # Prepared in SQL, and views, under ROW and MIXED: the check is made
    # when the statement runs, not when the server compiles it.
    for fmt in ("MIXED", "ROW"):
        rows = server.sql(f"""SET SESSION binlog_format = '{fmt}';
PREPARE one FROM 'SELECT snowflake_next_id()'; EXECUTE one; EXECUTE one;
PREPARE ins FROM 'INSERT INTO binlog.t (b) VALUES (?) RETURNING id';
SET @b = 3; EXECUTE ins USING @b;
CREATE OR REPLACE VIEW binlog.v AS SELECT snowflake_next_id() AS id; SELECT id FROM binlog.v;""")
        expect(len(rows) == 4 and len({r[0] for r in rows}) == 4 and all(int(r[0]) > 0 for r in rows),
               f"{fmt}: {rows}")
    expect_in("binlog_format=STATEMENT", server.error(
        "SET SESSION binlog_format = 'STATEMENT'; PREPARE one FROM 'SELECT snowflake_next_id()'; "
        "EXECUTE one"))
    # The message says what MIXED does, which the lines above show.
    expect_in("under MIXED, MariaDB logs a statement that calls a loadable function as rows",
              server.error("SET SESSION binlog_format = 'STATEMENT'; SELECT snowflake_next_id()"))


def test_replication(run):
    """A primary (ROW) and two replicas on loopback: one without a node
    (read-only), one with a node of its own that logs as STATEMENT with
    log_slave_updates. They apply the primary's CREATE TABLE and rows, and
    an ALTER that adds an index, and hold the primary's IDs; an ALTER that
    would fill a new column from the DEFAULT is refused on the primary under
    ROW and MIXED alike, and the way its message gives fills the column
    with the primary's IDs on every replica."""
    primary = run.server("primary", options=[f"snowflake-fields={FIELDS}", "log-bin=binlog",
                                             "server-id=11", "binlog-format=ROW"]).start()
    primary.install_functions()
    nonode = run.server("replica-nonode", options=["server-id=12", "read-only=1"]).start()
    stmt = run.server("replica-statement", options=[
        "snowflake-fields=datacenter=2,machine=9", "server-id=13", "log-bin=binlog",
        "log-slave-updates=1", "binlog-format=STATEMENT"]).start()
    replicas = [nonode, stmt]
    for replica in replicas:
        replica.install_functions()
        replicate(primary, replica)

    def same_everywhere(table):
        want = ids_of(primary, table)
        for replica in replicas:
            status = caught_up(primary, replica)
            expect(status["Slave_SQL_Running"] == "Yes" and not status["Last_SQL_Error"],
                   f"{replica.dir} stopped: {status['Last_SQL_Error']}")
            got = ids_of(replica, table)
            expect(got == want, f"{replica.dir} holds {got}, the primary {want}")
        return want

    make_table(primary, "app")
    primary.sql("INSERT INTO app.t (b) VALUES (1), (2), (3)")
    expect(len(same_everywhere("app.t")) == 3, "rows missing")
    primary.sql("ALTER TABLE app.t ADD INDEX (b); INSERT INTO app.t (b) VALUES (4)")
    same_everywhere("app.t")
    nonode.sql("FLUSH TABLES")
    expect(nonode.value("SELECT COUNT(*) FROM app.t") == "4", "the replica without a node")

    primary.sql("CREATE TABLE app.old (b INT NOT NULL); INSERT INTO app.old VALUES (1), (2), (3)")
    for fmt in ("ROW", "MIXED"):
        message = primary.error(f"SET SESSION binlog_format = '{fmt}'; ALTER TABLE app.old "
                                "ADD COLUMN id BIGINT NOT NULL DEFAULT snowflake_next_id()")
        expect_in("refusing to fill a new column's rows in ALTER TABLE", message)
        expect_in("UPDATE t SET id = snowflake_next_id()", message)
    # Into an empty table the column comes without a row to fill.
    primary.sql("CREATE TABLE app.empty (b INT); ALTER TABLE app.empty "
                "ADD COLUMN id BIGINT NOT NULL DEFAULT snowflake_next_id()")
    # The way the message gives.
    primary.sql("""ALTER TABLE app.old ADD COLUMN id BIGINT NOT NULL DEFAULT 0;
UPDATE app.old SET id = snowflake_next_id();
ALTER TABLE app.old ALTER COLUMN id SET DEFAULT snowflake_next_id();
ALTER TABLE app.old ADD PRIMARY KEY (id);
INSERT INTO app.old (b) VALUES (4);
INSERT INTO app.empty (b) VALUES (1);""")
    ids = same_everywhere("app.old")
    expect(len(set(ids)) == 4 and all(int(i) > 0 for i in ids), f"{ids}")
    same_everywhere("app.empty")
    # A statement logged as a statement that would make an ID on a replica
    # (its table has the DEFAULT there only) stops the replica's applier
    # rather than store an ID the primary never made.
    primary.sql("SET sql_log_bin = 0; CREATE TABLE app.mine (b INT)")
    nonode.sql("SET GLOBAL read_only = 0; CREATE TABLE app.mine (b INT, "
               "id BIGINT NOT NULL DEFAULT snowflake_next_id()); SET GLOBAL read_only = 1")
    primary.sql("SET SESSION binlog_format = 'STATEMENT'; INSERT INTO app.mine (b) VALUES (1)")
    status = caught_up(primary, nonode)
    expect(status["Slave_SQL_Running"] == "No", "the replica made an ID of its own")
    expect_in("refusing to issue in a replica's applier thread", status["Last_SQL_Error"])
    for replica in replicas:
        replica.stop()
    primary.stop()

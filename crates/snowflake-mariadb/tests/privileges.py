"""Who may issue: EXECUTE on snowflake.next_id, checked for each statement
that makes an ID, and for nothing else: opening a table whose DEFAULT calls
snowflake_next_id() to read or dump it needs no right to issue."""

import os
import subprocess

from common import expect, expect_in, make_table


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
    # Through a DEFAULT, whose compiled call serves every statement of the
    # connection: checked again once the role is dropped.
    server.sql("CREATE TABLE priv.d (id BIGINT NOT NULL DEFAULT snowflake_next_id(), b INT)")
    expect_in("'via_role' may not issue", server.error(
        "SET ROLE issuer; INSERT INTO priv.d (b) VALUES (1); SET ROLE NONE; "
        "INSERT INTO priv.d (b) VALUES (2)", user="via_role"))
    expect(server.value("SELECT COUNT(*) FROM priv.d") == "1", "the insert without the role")
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


def test_opening_a_table_needs_no_right_to_issue(run):
    """A table whose DEFAULT calls snowflake_next_id(), out of the table
    cache each time (FLUSH TABLES), is read, described and dumped by users
    without EXECUTE and read in a binlog_format=STATEMENT session; whoever
    opened it first, only a user with EXECUTE inserts through the DEFAULT,
    INSERT DELAYED included."""
    server = run.main()
    make_table(server, "opened")
    make_table(server, "later", engine="MyISAM")
    server.sql("""CREATE USER reader@localhost, writer@localhost, opener@localhost,
  backup@localhost;
GRANT SELECT ON opened.* TO reader@localhost;
GRANT SELECT, INSERT ON opened.* TO writer@localhost;
GRANT SELECT, INSERT ON later.* TO writer@localhost;
GRANT SELECT, INSERT ON opened.* TO opener@localhost;
GRANT SELECT, INSERT ON later.* TO opener@localhost;
GRANT EXECUTE ON FUNCTION snowflake.next_id TO opener@localhost;
GRANT SELECT, LOCK TABLES, SHOW VIEW ON *.* TO backup@localhost;
INSERT INTO opened.t (b) VALUES (1);""")

    def fresh(statements, **kw):
        """`statements` on a table cache without the table."""
        server.sql("FLUSH TABLES")
        return server.sql(statements, **kw)

    expect(fresh("SELECT COUNT(*) FROM opened.t", user="reader") == [["1"]], "reader")
    expect_in("DEFAULT snowflake_next_id()",
              fresh("SHOW CREATE TABLE opened.t", user="reader")[0][1])
    expect(fresh("SET SESSION binlog_format = 'STATEMENT'; SELECT COUNT(*) FROM opened.t")
           == [["1"]], "a STATEMENT session's SELECT")
    server.sql("FLUSH TABLES")
    dump = subprocess.run(["mariadb-dump", "--no-defaults", f"--socket={server.sock}", "-u",
                           "backup", "opened"], capture_output=True, text=True)
    expect(dump.returncode == 0, f"mariadb-dump by backup: {dump.stderr}")
    expect_in("INSERT INTO `t` VALUES", dump.stdout)
    # Opened by a user who may issue, then used by one who may not.
    fresh("INSERT INTO opened.t (b) VALUES (2)", user="opener")
    expect_in("'writer' may not issue IDs",
              server.error("INSERT INTO opened.t (b) VALUES (3)", user="writer"))
    # Opened by the refused one first: the next user is not refused for it.
    server.sql("FLUSH TABLES")
    expect_in("may not issue", server.error("INSERT INTO opened.t (b) VALUES (4)",
                                            user="writer"))
    expect(int(server.value("INSERT INTO opened.t (b) VALUES (5) RETURNING id", user="opener")) > 0,
           "opener after writer's refusal")
    # INSERT DELAYED evaluates the DEFAULT for the user who sent it.
    server.sql("INSERT DELAYED INTO later.t (b) VALUES (1), (2)", user="opener")
    server.sql("FLUSH TABLES later.t")
    expect(server.value("SELECT COUNT(DISTINCT id) FROM later.t WHERE id > 0") == "2",
           "INSERT DELAYED by opener")
    expect_in("'writer' may not issue", server.error(
        "INSERT DELAYED INTO later.t (b) VALUES (3)", user="writer"))

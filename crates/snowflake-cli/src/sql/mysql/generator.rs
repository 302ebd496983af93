//! `<prefix>_next_id()` as a MySQL/MariaDB stored function, and its install.
//!
//! The state is a one-row MyISAM table: MyISAM has no transactions, so a
//! rollback cannot take back a state that a caller's ID was made from, and
//! what it writes survives a restart. MySQL locks a MyISAM table that a
//! stored function writes for the whole statement that calls it, before the
//! statement begins, so callers take turns without a lock of their own, and
//! the lock never outlives the statement (whatever the caller's transaction
//! does). Neither MySQL nor MariaDB takes a stored function as a column
//! default: a BEFORE INSERT trigger sets the column.
//!
//! `SYSDATE(6)` is the clock: unlike `NOW()`, it is read when called, not
//! when the statement began. It is read in UTC, so that the hour a summer
//! time repeats cannot look like the clock going back.
//!
//! Under statement-based binary logging a replica would run the statement
//! that called the function again, and make other IDs: the function refuses
//! to issue while the statement is logged that way.
//!
//! The install compares the generator with every other in the databases of
//! the server that the installing user can see (`information_schema`
//! shows a user the routines it has some right on); it cannot see the rest.

use super::{DELIMITER, Mysql};
use crate::sql::database::{GeneratorNotes, GeneratorSql};
use crate::sql::generator::{
    BITS_WORDS, MADE_BY, MASK_WORDS, REGISTRY, STATE_LAYOUT_WORDS, SqlGenerator,
};
use crate::sql::layout::{SqlLayout, quoted};

/// SIGNAL's message is at most 128 characters.
const MESSAGE_MAX: usize = 128;

/// The user-level lock that installs of generators take, one at a time on
/// a server, and how long one waits for it, seconds. Any user may take it,
/// which at worst holds up an install.
const INSTALL_LOCK: &str = "snowflake sql --generator";
const INSTALL_WAIT_S: u32 = 30;

impl GeneratorSql for Mysql {
    fn notes(&self, generator: &SqlGenerator) -> GeneratorNotes {
        let state_lines = vec![
            format!(
                "The state is the MyISAM table {}: the last ID's tick and sequence",
                generator.state
            ),
            "number (MyISAM has no transactions, so a rollback cannot take it back).".into(),
            "MySQL locks it for each statement that calls the function, so callers take".into(),
            "turns; a long statement that makes many IDs holds the others up until it".into(),
            "ends. The function, and a trigger that calls it, run with their definer's".into(),
            "rights (SQL SECURITY DEFINER): users that insert need INSERT on the table and".into(),
            "nothing of the generator; users that call it need EXECUTE:".into(),
            format!("  GRANT EXECUTE ON FUNCTION {} TO app;", generator.function),
            "No other user may have rights on the state (rights on the whole database".into(),
            "include it): one that can read it can hold its lock for as long as it reads.".into(),
            "With binary logging on, the server needs log_bin_trust_function_creators = 1".into(),
            "(to create the function and, in MariaDB, to run it), and binlog_format ROW".into(),
            "or MIXED: under STATEMENT a replica would make other IDs, so the function".into(),
            "refuses. The server must not run with --sysdate-is-now.".into(),
        ];
        // A stored function cannot be a column default in MySQL and MariaDB,
        // and DEFAULT of a column without one is refused before any trigger.
        let default_lines = vec![
            "CREATE TABLE posts (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, body TEXT);".into(),
            "CREATE TRIGGER posts_id BEFORE INSERT ON posts FOR EACH ROW".into(),
            format!(
                "  SET NEW.id = IF(NEW.id = 0, {}(), NEW.id);",
                generator.function
            ),
            "(a trigger: MySQL and MariaDB take no stored function as a column default)".into(),
        ];
        GeneratorNotes {
            state: state_lines,
            default: default_lines,
            seen: &[
                "  It sees those in the databases of the server that the installing user has",
                "  some right in, and no others.",
            ],
        }
    }

    fn install_start(&self) -> &'static str {
        "\n"
    }

    /// The checks, in a procedure called before anything of the generator
    /// is made; the client stops at its error. It takes the lock of
    /// installs, which the script lets go at its end (or the session's).
    fn install_check(&self, layout: &SqlLayout, generator: &SqlGenerator) -> String {
        let check = format!("{}_install_check", generator.function);
        format!(
            "DELIMITER {DELIMITER}
DROP PROCEDURE IF EXISTS {check}{DELIMITER}
CREATE PROCEDURE {check}()
BEGIN
{}{}{}{}{}{}END{DELIMITER}
DELIMITER ;
CALL {check}();
DROP PROCEDURE {check};

",
            check_declarations(),
            install_lock(),
            state_of_this_layout(layout, generator),
            previous_registry(layout, generator),
            no_generator_meets(layout, generator),
            drop_previous_registry(),
        )
    }

    fn registry_view(&self) -> String {
        format!(
            "CREATE OR REPLACE SQL SECURITY INVOKER VIEW {REGISTRY} AS\n{};\n\n",
            registry_select()
        )
    }

    /// A table made by the previous version has the comment of then.
    fn state(&self, generator: &SqlGenerator) -> String {
        let state = &generator.state;
        let state_comment =
            quoted(&generator.state_comment("the last ID's tick and sequence number"));
        format!(
            "CREATE TABLE IF NOT EXISTS {state} (\n\
             \x20 tick BIGINT NOT NULL COMMENT 'the last ID''s tick',\n\
             \x20 seq BIGINT NOT NULL COMMENT 'the last ID''s sequence number'\n\
             ) ENGINE=MyISAM COMMENT '{state_comment}';\n\
             ALTER TABLE {state} COMMENT '{state_comment}';\n\
             INSERT INTO {state} (tick, seq) SELECT 0, 0 FROM DUAL WHERE NOT EXISTS (SELECT * FROM {state});\n\n",
        )
    }

    fn next_id(&self, layout: &SqlLayout, generator: &SqlGenerator) -> String {
        let SqlGenerator {
            function, state, ..
        } = generator;
        format!(
            "-- A new ID; see the comment above.
DROP FUNCTION IF EXISTS {function}{DELIMITER}
CREATE FUNCTION {function}() RETURNS BIGINT
  NOT DETERMINISTIC MODIFIES SQL DATA
  COMMENT '{comment}'
BEGIN
  DECLARE _tick, _seq BIGINT;      -- the last ID's, then the new one's
  DECLARE _us, _ms BIGINT;         -- the database clock, Unix microseconds and ms
  DECLARE _now BIGINT;             -- the clock's tick
  DECLARE _prev BIGINT DEFAULT -1; -- the clock's last reading
  DECLARE _behind BIGINT;          -- how far the clock is behind the last ID's tick, ms
  DECLARE _zone VARCHAR(64);
  DECLARE _msg VARCHAR({MESSAGE_MAX});
{read_the_state}  next_id: LOOP
{clock}{advance}{wait}  END LOOP;
  UPDATE {state} SET tick = _tick, seq = _seq;
  RETURN CAST({id} AS SIGNED);
END{DELIMITER}

",
            comment = quoted(&generator.function_comment(layout)),
            read_the_state = read_the_state(generator),
            clock = read_the_clock(layout, generator),
            advance = advance(generator),
            wait = wait_or_refuse(layout, generator),
            id = generator.id(layout, "_seq"),
        )
    }

    fn install_end(&self, _: &SqlGenerator) -> String {
        format!("DO RELEASE_LOCK('{INSTALL_LOCK}');\n")
    }
}

/// Sets `_msg` to `message`, an SQL expression cut to what SIGNAL takes,
/// and signals it.
fn signal(message: &str) -> String {
    format!(
        "SET _msg = LEFT({message}, {MESSAGE_MAX});\n      \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;"
    )
}

/// Every generator the reader can see, from the comments of functions: its
/// database and function, the bits its node fields fix and their mask
/// (NULL for a generator of the previous version), and the comment.
fn registry_select() -> String {
    let has_bits = format!("LOCATE('{BITS_WORDS}', ROUTINE_COMMENT) > 0");
    format!(
        "SELECT ROUTINE_SCHEMA AS schema_name, ROUTINE_NAME AS function_name,\n\
         \x20 IF({has_bits}, CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(ROUTINE_COMMENT, '{BITS_WORDS}', -1),\n\
         \x20   '{MASK_WORDS}', 1) AS UNSIGNED), NULL) AS node_bits,\n\
         \x20 IF({has_bits}, CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(ROUTINE_COMMENT, '{MASK_WORDS}', -1),\n\
         \x20   '.', 1) AS UNSIGNED), NULL) AS node_mask,\n\
         \x20 ROUTINE_COMMENT AS description\n\
         FROM information_schema.ROUTINES\n\
         WHERE ROUTINE_TYPE = 'FUNCTION' AND LOCATE('{MADE_BY}', ROUTINE_COMMENT) > 0"
    )
}

/// The check procedure's variables, and its cursor over the generators.
fn check_declarations() -> String {
    format!(
        "  DECLARE _done INT DEFAULT 0;
  DECLARE _schema, _name VARCHAR(64);
  DECLARE _bits, _mask BIGINT UNSIGNED;
  DECLARE _description TEXT;
  DECLARE _comment, _layout VARCHAR(2048);
  DECLARE _msg VARCHAR({MESSAGE_MAX});
  DECLARE _generators CURSOR FOR {};
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET _done = 1;
",
        registry_select()
    )
}

/// One install at a time, under a user-level lock that the script lets go
/// at its end.
fn install_lock() -> String {
    format!(
        "  -- One install at a time on the server, so that two cannot miss each other.
  IF GET_LOCK('{INSTALL_LOCK}', {INSTALL_WAIT_S}) IS NOT TRUE THEN
    {}
  END IF;
",
        signal(&format!(
            "'another session has held the lock of generator installs (GET_LOCK ''{INSTALL_LOCK}'') for {INSTALL_WAIT_S} s; try again'"
        ))
    )
}

/// The refusal of a prefix whose state is of another layout.
fn another_layout(layout: &SqlLayout) -> String {
    signal(&format!(
        "'prefix {} has a generator of another layout; drop it first (see the comment of snowflake sql)'",
        layout.prefix
    ))
}

/// The state under this prefix, if there is one, is of this layout.
fn state_of_this_layout(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        state, layout_key, ..
    } = generator;
    format!(
        "  -- A state of another layout under this prefix.
  SET _comment = (SELECT TABLE_COMMENT FROM information_schema.TABLES
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{state}');
  IF LOCATE('{STATE_LAYOUT_WORDS}', _comment) > 0
     AND LOCATE('{STATE_LAYOUT_WORDS}{layout_key}:', _comment) = 0 THEN
    {}
  END IF;
",
        another_layout(layout)
    )
}

/// Whether the previous version's registry table is there.
fn previous_registry_exists() -> String {
    format!(
        "EXISTS (SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()\n\
         \x20     AND TABLE_NAME = '{REGISTRY}' AND TABLE_TYPE = 'BASE TABLE')"
    )
}

/// The previous version's registry table: its row of this prefix is of
/// this layout.
fn previous_registry(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    format!(
        "  IF {} THEN
    SET _layout = (SELECT layout FROM {REGISTRY} WHERE prefix = '{}');
    IF _layout <> '{}' THEN
      {}
    END IF;
  END IF;
",
        previous_registry_exists(),
        layout.prefix,
        generator.layout_key,
        another_layout(layout)
    )
}

/// No other generator the installer can see can issue this one's IDs.
fn no_generator_meets(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        node_text,
        ..
    } = generator;
    // What the previous version wrote in the comment of a generator of this
    // layout and node: it recorded no bits, but that one issues these IDs.
    let previous = format!(
        "A new Snowflake ID of layout {} with {node_text}. {MADE_BY}.",
        layout.name
    );
    format!(
        "  -- Every other generator the installer can see whose IDs could be this
  -- one's: where the node fields of both fix a bit, they fix it alike.
  OPEN _generators;
  generators: LOOP
    FETCH _generators INTO _schema, _name, _bits, _mask, _description;
    IF _done THEN
      LEAVE generators;
    END IF;
    IF _schema = DATABASE() AND _name = '{function}' THEN
      ITERATE generators;
    END IF;
    IF _bits IS NULL THEN
      IF _description <> '{previous}' THEN
        ITERATE generators;
      END IF;
    ELSEIF ((_bits ^ {node_bits}) & _mask & {node_mask}) <> 0 THEN
      ITERATE generators;
    END IF;
    {conflict}
  END LOOP;
  CLOSE _generators;
",
        node_bits = generator.node_bits,
        node_mask = generator.node_mask,
        conflict = signal(&format!(
            "CONCAT('generator ', _schema, '.', _name, ' can issue the IDs of this one ({node_text}): give this one other node values')"
        )),
    )
}

/// The previous version's registry table goes: the view replaces it.
fn drop_previous_registry() -> String {
    format!(
        "  -- The previous version's registry table, which the view replaces.
  IF {} THEN
    PREPARE _drop FROM 'DROP TABLE {REGISTRY}';
    EXECUTE _drop;
    DEALLOCATE PREPARE _drop;
  END IF;
",
        previous_registry_exists()
    )
}

/// Refuses to issue where a replica would make other IDs, and reads the
/// last ID's tick and sequence number.
fn read_the_state(generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function, state, ..
    } = generator;
    format!(
        "  -- The format first: under ROW or MIXED, the one variable read.
  IF @@session.binlog_format = 'STATEMENT' AND @@log_bin = 1 AND @@session.sql_log_bin = 1 THEN
      {}
  END IF;
  SELECT tick, seq INTO _tick, _seq FROM {state};
  IF _tick IS NULL THEN
      {}
  END IF;
",
        signal(&format!(
            "'binlog_format is STATEMENT: a replica would make other IDs; set it to MIXED or ROW ({function})'"
        )),
        signal(&format!(
            "'{state} has no row: run snowflake sql --generator again, and do not empty it'"
        )),
    )
}

/// The clock, read in UTC once a turn, moving and in the layout's times.
fn read_the_clock(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        last_tick,
        ..
    } = generator;
    let epoch = layout.epoch_ms;
    let epoch_text = snowflake::UnixMillis(epoch);
    let last = snowflake::UnixMillis(generator.last_ms(layout));
    format!(
        "    SET _zone = @@session.time_zone, time_zone = '+00:00';
    SET _us = CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED), time_zone = _zone;
    IF _us = _prev THEN
      {stuck}
    END IF;
    SET _prev = _us, _ms = _us DIV 1000;
    IF _ms < {epoch} THEN
      {before}
    END IF;
    SET _now = {now};
    IF _now > {last_tick} THEN
      {ran_out}
    END IF;
",
        now = layout.units_of("_ms", "DIV"),
        stuck = signal(&format!(
            "'SYSDATE() did not move while {function} waited: is the server run with --sysdate-is-now?'"
        )),
        before = signal(&format!(
            "CONCAT('the database clock reads Unix ms ', _ms, ', before the layout''s epoch, {epoch_text} ({function})')"
        )),
        ran_out = signal(&format!(
            "'IDs of this layout ran out at {last} ({function})'"
        )),
    )
}

/// The new ID is the first of a later tick the clock has reached, or the
/// next in the last ID's tick.
fn advance(generator: &SqlGenerator) -> String {
    format!(
        "    IF _now > _tick THEN
      SET _tick = _now, _seq = 0;
      LEAVE next_id;
    END IF;
    IF _now = _tick AND _seq < {} THEN
      SET _seq = _seq + 1;
      LEAVE next_id;
    END IF;
",
        generator.seq_max
    )
}

/// Waits for the clock, or refuses one further back than the tolerance.
fn wait_or_refuse(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        tolerance_ms,
        ..
    } = generator;
    format!(
        "    -- The clock went back, or the sequence of its tick is used up: wait for
    -- the last ID's tick, or for the next.
    SET _behind = {last_start} - _ms;
    IF _behind > {tolerance_ms} THEN
      {backwards}
    END IF;
    DO SLEEP((({next_start}) * 1000 - _us) / 1000000);
",
        last_start = layout.unix_ms_of("_tick"),
        next_start = layout.unix_ms_of("IF(_now < _tick, _tick, _tick + 1)"),
        backwards = signal(&format!(
            "CONCAT('the database clock went backwards by ', _behind, ' ms, more than the {tolerance_ms} ms tolerated; no IDs until it catches up ({function})')"
        )),
    )
}

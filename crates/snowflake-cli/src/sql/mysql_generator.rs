//! `<prefix>_next_id()` as a MySQL/MariaDB stored function.
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

use super::generator::{NextId, REGISTRY};
use super::plan::{Plan, shifted};

/// SIGNAL's message is at most 128 characters.
const MESSAGE_MAX: usize = 128;

/// What comes before the read functions (the comment and the checks) and
/// after them (the state and the function).
pub fn render(plan: &Plan, next: &NextId) -> (String, String) {
    let state_lines = [
        format!(
            "The state is the MyISAM table {}: the last ID's tick and sequence",
            next.state
        ),
        "number (MyISAM has no transactions, so a rollback cannot take it back).".into(),
        "MySQL locks it for each statement that calls the function, so callers take".into(),
        "turns; a long statement that makes many IDs holds the others up until it".into(),
        "ends. With binary logging on, creating the function needs SUPER or".into(),
        "log_bin_trust_function_creators = 1, and replicas binlog_format ROW or MIXED.".into(),
        "The server must not run with --sysdate-is-now.".into(),
    ];
    // A stored function cannot be a column default in MySQL and MariaDB,
    // and DEFAULT of a column without one is refused before any trigger.
    let defaults = [
        "CREATE TABLE posts (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, body TEXT);".into(),
        "CREATE TRIGGER posts_id BEFORE INSERT ON posts FOR EACH ROW".into(),
        format!(
            "  SET NEW.id = IF(NEW.id = 0, {}(), NEW.id);",
            next.function
        ),
        "(a trigger: MySQL and MariaDB take no stored function as a column default)".into(),
    ];
    let mut before = next.comment(plan, &state_lines, &defaults);
    before.push('\n');
    before.push_str(&registry(plan, next));
    let mut after = format!(
        "CREATE TABLE IF NOT EXISTS {state} (\n\
         \x20 tick BIGINT NOT NULL COMMENT 'the last ID''s tick',\n\
         \x20 seq BIGINT NOT NULL COMMENT 'the last ID''s sequence number'\n\
         ) ENGINE=MyISAM COMMENT 'The state of {function}(). Never lower it: IDs would repeat.';\n\
         INSERT INTO {state} (tick, seq) SELECT 0, 0 FROM DUAL WHERE NOT EXISTS (SELECT * FROM {state});\n\n",
        state = next.state,
        function = next.function,
    );
    after.push_str("DELIMITER //\n\n");
    after.push_str(&function(plan, next));
    after.push_str("DELIMITER ;\n");
    (before, after)
}

/// The registry's row for this generator, after the checks; the client
/// stops at the first error, before anything of the generator exists.
fn registry(plan: &Plan, next: &NextId) -> String {
    let prefix = &plan.prefix;
    let layout = &next.layout_key;
    let node_bits = next.node_bits as i64;
    let check = format!("{}_install_check", next.function);
    format!(
        "CREATE TABLE IF NOT EXISTS {REGISTRY} (\n\
         \x20 prefix VARCHAR(40) NOT NULL PRIMARY KEY,\n\
         \x20 layout VARCHAR(255) NOT NULL,\n\
         \x20 node VARCHAR(255) NOT NULL,\n\
         \x20 node_bits BIGINT NOT NULL,\n\
         \x20 UNIQUE KEY one_generator_per_node (layout, node_bits)\n\
         ) ENGINE=InnoDB;\n\n\
         DELIMITER //\n\
         DROP PROCEDURE IF EXISTS {check}//\n\
         CREATE PROCEDURE {check}()\n\
         BEGIN\n\
         \x20 DECLARE _other VARCHAR(255);\n\
         \x20 DECLARE _msg VARCHAR({MESSAGE_MAX});\n\
         \x20 SET _other = (SELECT layout FROM {REGISTRY} WHERE prefix = '{prefix}' AND layout <> '{layout}');\n\
         \x20 IF _other IS NOT NULL THEN\n\
         \x20   SET _msg = 'prefix {prefix} has a generator of another layout; drop it first (see the comment of snowflake sql)';\n\
         \x20   SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;\n\
         \x20 END IF;\n\
         \x20 SET _other = (SELECT prefix FROM {REGISTRY}\n\
         \x20   WHERE layout = '{layout}' AND node_bits = {node_bits} AND prefix <> '{prefix}');\n\
         \x20 IF _other IS NOT NULL THEN\n\
         \x20   SET _msg = LEFT(CONCAT('generator ', _other, ' already issues IDs of this layout and node; give this one other node values'), {MESSAGE_MAX});\n\
         \x20   SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;\n\
         \x20 END IF;\n\
         END//\n\
         DELIMITER ;\n\
         CALL {check}();\n\
         DROP PROCEDURE {check};\n\
         START TRANSACTION;\n\
         DELETE FROM {REGISTRY} WHERE prefix = '{prefix}';\n\
         INSERT INTO {REGISTRY} (prefix, layout, node, node_bits)\n\
         \x20 VALUES ('{prefix}', '{layout}', '{node}', {node_bits});\n\
         COMMIT;\n\n",
        node = next.node_text,
    )
}

fn function(plan: &Plan, next: &NextId) -> String {
    let NextId {
        function,
        state,
        seq_max,
        seq_shift,
        last_tick,
        tolerance_ms,
        ..
    } = next;
    let epoch = plan.epoch_ms;
    let mut id = vec![shifted("_tick", plan.time_shift)];
    if next.node_bits != 0 {
        id.push(next.node_bits.to_string());
    }
    id.push(shifted("_seq", *seq_shift));
    let last = snowflake::UnixMillis(next.last_ms(plan));
    let epoch_text = snowflake::UnixMillis(epoch);
    let signal = |message: &str| {
        format!(
            "SET _msg = LEFT({message}, {MESSAGE_MAX});\n      \
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;"
        )
    };
    format!(
        "-- A new ID; see the comment above.
DROP FUNCTION IF EXISTS {function}//
CREATE FUNCTION {function}() RETURNS BIGINT
  NOT DETERMINISTIC MODIFIES SQL DATA
  COMMENT 'A new Snowflake ID of layout {layout} with {node}. Made by snowflake sql --generator.'
BEGIN
  DECLARE _tick, _seq BIGINT;      -- the last ID's, then the new one's
  DECLARE _us, _ms BIGINT;         -- the database clock, Unix microseconds and ms
  DECLARE _now BIGINT;             -- the clock's tick
  DECLARE _prev BIGINT DEFAULT -1; -- the clock's last reading
  DECLARE _behind BIGINT;          -- how far the clock is behind the last ID's tick, ms
  DECLARE _zone VARCHAR(64);
  DECLARE _msg VARCHAR({MESSAGE_MAX});
  SELECT tick, seq INTO _tick, _seq FROM {state};
  IF _tick IS NULL THEN
      {empty}
  END IF;
  next_id: LOOP
    SET _zone = @@session.time_zone, time_zone = '+00:00';
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
    IF _now > _tick THEN
      SET _tick = _now, _seq = 0;
      LEAVE next_id;
    END IF;
    IF _now = _tick AND _seq < {seq_max} THEN
      SET _seq = _seq + 1;
      LEAVE next_id;
    END IF;
    -- The clock went back, or the sequence of its tick is used up: wait for
    -- the last ID's tick, or for the next.
    SET _behind = {last_start} - _ms;
    IF _behind > {tolerance_ms} THEN
      {backwards}
    END IF;
    DO SLEEP((({next_start}) * 1000 - _us) / 1000000);
  END LOOP;
  UPDATE {state} SET tick = _tick, seq = _seq;
  RETURN CAST({id} AS SIGNED);
END//

",
        layout = plan.layout,
        node = next.node_text,
        now = plan.units_of("_ms", "DIV"),
        last_start = plan.unix_ms_of("_tick"),
        next_start = plan.unix_ms_of("IF(_now < _tick, _tick, _tick + 1)"),
        id = id.join(" | "),
        empty = signal(&format!(
            "'{state} has no row: run snowflake sql --generator again, and do not empty it'"
        )),
        stuck = signal(&format!(
            "'SYSDATE() did not move while {function} waited: is the server run with --sysdate-is-now?'"
        )),
        before = signal(&format!(
            "CONCAT('the database clock reads Unix ms ', _ms, ', before the layout''s epoch, {epoch_text} ({function})')"
        )),
        ran_out = signal(&format!(
            "'IDs of this layout ran out at {last} ({function})'"
        )),
        backwards = signal(&format!(
            "CONCAT('the database clock went backwards by ', _behind, ' ms, more than the {tolerance_ms} ms tolerated; no IDs until it catches up ({function})')"
        )),
    )
}

-- SQL functions for Snowflake IDs of layout twitter (time:41,datacenter:5,machine:5,sequence:12), made by `snowflake sql`.
-- Epoch 1288834974657 (2010-11-04T01:42:54.657Z); one tick is 1 ms; the last time an ID can hold is 3487858230208 (2080-07-10T17:30:30.208Z).
--
--   id = (time units << 22) | (datacenter << 17) | (machine << 12) | sequence
--   time units = (Unix ms - 1288834974657)
--
-- The top bit is a sign bit that stays 0, so every ID is a positive bigint;
-- these functions refuse a negative one.
--
-- Pure functions, with no state and no table: DETERMINISTIC NO SQL, so binary
-- logging accepts them and a call with constants is worked out once. MySQL and
-- MariaDB allow no stored function in generated columns or partition bounds:
-- there, write the number a function gives (SELECT ..._min_id('2025-01-01')).
-- DATETIME has no time zone: these functions read and write UTC.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   prev_time(id) -> DATETIME(3)   the time of an ID
--   prev_datacenter(id) -> bigint   its datacenter field, 0 to 31
--   prev_machine(id) -> bigint   its machine field, 0 to 31
--   prev_sequence(id) -> bigint   its sequence field, 0 to 4095
--   prev_compose(ts, datacenter, machine, sequence) -> bigint   the ID of a time and field values
--   prev_min_id(ts) -> bigint, prev_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, prev_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN prev_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND prev_max_id(UTC_TIMESTAMP(3));
--   SELECT prev_compose(UTC_TIMESTAMP(3), 0, 0, 0);

-- The generator (--generator), installed after the functions:
--   prev_next_id() -> bigint   a new ID with datacenter=1, machine=5
-- Its IDs are unique and increasing, and each one's time is the database
-- clock's when it was made. As a column's default:
--   CREATE TABLE posts (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, body TEXT);
--   CREATE TRIGGER posts_id BEFORE INSERT ON posts FOR EACH ROW
--     SET NEW.id = IF(NEW.id = 0, prev_next_id(), NEW.id);
--   (a trigger: MySQL and MariaDB take no stored function as a column default)
--
-- The state is the MyISAM table prev_next_id_state: the last ID's tick and sequence
-- number (MyISAM has no transactions, so a rollback cannot take it back).
-- MySQL locks it for each statement that calls the function, so callers take
-- turns; a long statement that makes many IDs holds the others up until it
-- ends. With binary logging on, creating the function needs SUPER or
-- log_bin_trust_function_creators = 1, and replicas binlog_format ROW or MIXED.
-- The server must not run with --sysdate-is-now.
--
-- - Up to 4096 IDs a tick of 1 ms: one generator's ceiling. When a tick's are used
--   up, the call waits for the next tick; the sequence never wraps.
-- - The clock is read once a call, under the lock. If it reads earlier than the last
--   ID's tick by up to 5 ms, the call waits for it; further back, the call fails,
--   says by how much, and no ID is issued until the clock has caught up. No ID
--   carries a time later than the clock's.
-- - A rolled-back transaction burns its IDs: they are never issued again. The
--   state survives a restart. Never lower it: IDs would repeat.
-- - IDs run out at 2080-07-10T17:30:30.208Z (the generator's last tick).
-- - Several generators in one database: one per prefix, each with node values
--   of its own. The table snowflake_generators lists them and refuses a second
--   with the same layout and node, which would issue the same IDs. One
--   generator's rate is at most the layout's ceiling: more takes more generators,
--   with more node values.

CREATE TABLE IF NOT EXISTS snowflake_generators (
  prefix VARCHAR(40) NOT NULL PRIMARY KEY,
  layout VARCHAR(255) NOT NULL,
  node VARCHAR(255) NOT NULL,
  node_bits BIGINT NOT NULL,
  UNIQUE KEY one_generator_per_node (layout, node_bits)
) ENGINE=InnoDB;

DELIMITER //
DROP PROCEDURE IF EXISTS prev_next_id_install_check//
CREATE PROCEDURE prev_next_id_install_check()
BEGIN
  DECLARE _other VARCHAR(255);
  DECLARE _msg VARCHAR(128);
  SET _other = (SELECT layout FROM snowflake_generators WHERE prefix = 'prev' AND layout <> 'time:41,datacenter:5,machine:5,sequence:12 epoch 1288834974657 tick 1 ms');
  IF _other IS NOT NULL THEN
    SET _msg = 'prefix prev has a generator of another layout; drop it first (see the comment of snowflake sql)';
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SET _other = (SELECT prefix FROM snowflake_generators
    WHERE layout = 'time:41,datacenter:5,machine:5,sequence:12 epoch 1288834974657 tick 1 ms' AND node_bits = 151552 AND prefix <> 'prev');
  IF _other IS NOT NULL THEN
    SET _msg = LEFT(CONCAT('generator ', _other, ' already issues IDs of this layout and node; give this one other node values'), 128);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
END//
DELIMITER ;
CALL prev_next_id_install_check();
DROP PROCEDURE prev_next_id_install_check;
START TRANSACTION;
DELETE FROM snowflake_generators WHERE prefix = 'prev';
INSERT INTO snowflake_generators (prefix, layout, node, node_bits)
  VALUES ('prev', 'time:41,datacenter:5,machine:5,sequence:12 epoch 1288834974657 tick 1 ms', 'datacenter=1, machine=5', 151552);
COMMIT;

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS prev_time//
CREATE FUNCTION prev_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SET _ms = CAST((id >> 22) & 2199023255551 AS SIGNED) + 1288834974657;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The datacenter field of an ID, 0 to 31.
DROP FUNCTION IF EXISTS prev_datacenter//
CREATE FUNCTION prev_datacenter(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN (id >> 17) & 31;
END//

-- The machine field of an ID, 0 to 31.
DROP FUNCTION IF EXISTS prev_machine//
CREATE FUNCTION prev_machine(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN (id >> 12) & 31;
END//

-- The sequence field of an ID, 0 to 4095.
DROP FUNCTION IF EXISTS prev_sequence//
CREATE FUNCTION prev_sequence(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN id & 4095;
END//

-- The ID of a time in UTC (floored to the tick) and field values.
DROP FUNCTION IF EXISTS prev_compose//
CREATE FUNCTION prev_compose(ts DATETIME(3), `datacenter` BIGINT, `machine` BIGINT, `sequence` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1288834974657 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2010-11-04 01:42:54.657');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 3487858230208 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2080-07-10 17:30:30.208');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `datacenter` < 0 OR `datacenter` > 31 THEN
    SET _msg = CONCAT('datacenter ', `datacenter`, ' is out of range 0 to 31 (5 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `machine` < 0 OR `machine` > 31 THEN
    SET _msg = CONCAT('machine ', `machine`, ' is out of range 0 to 31 (5 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `sequence` < 0 OR `sequence` > 4095 THEN
    SET _msg = CONCAT('sequence ', `sequence`, ' is out of range 0 to 4095 (12 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1288834974657) << 22) | (`datacenter` << 17) | (`machine` << 12) | `sequence` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS prev_min_id//
CREATE FUNCTION prev_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1288834974657 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2010-11-04 01:42:54.657');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 3487858230208 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2080-07-10 17:30:30.208');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1288834974657) << 22) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS prev_max_id//
CREATE FUNCTION prev_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1288834974657 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2010-11-04 01:42:54.657');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 3487858230208 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2080-07-10 17:30:30.208');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1288834974657) << 22) | 4194303 AS SIGNED);
END//

DELIMITER ;
CREATE TABLE IF NOT EXISTS prev_next_id_state (
  tick BIGINT NOT NULL COMMENT 'the last ID''s tick',
  seq BIGINT NOT NULL COMMENT 'the last ID''s sequence number'
) ENGINE=MyISAM COMMENT 'The state of prev_next_id(). Never lower it: IDs would repeat.';
INSERT INTO prev_next_id_state (tick, seq) SELECT 0, 0 FROM DUAL WHERE NOT EXISTS (SELECT * FROM prev_next_id_state);

DELIMITER //

-- A new ID; see the comment above.
DROP FUNCTION IF EXISTS prev_next_id//
CREATE FUNCTION prev_next_id() RETURNS BIGINT
  NOT DETERMINISTIC MODIFIES SQL DATA
  COMMENT 'A new Snowflake ID of layout twitter with datacenter=1, machine=5. Made by snowflake sql --generator.'
BEGIN
  DECLARE _tick, _seq BIGINT;      -- the last ID's, then the new one's
  DECLARE _us, _ms BIGINT;         -- the database clock, Unix microseconds and ms
  DECLARE _now BIGINT;             -- the clock's tick
  DECLARE _prev BIGINT DEFAULT -1; -- the clock's last reading
  DECLARE _behind BIGINT;          -- how far the clock is behind the last ID's tick, ms
  DECLARE _zone VARCHAR(64);
  DECLARE _msg VARCHAR(128);
  SELECT tick, seq INTO _tick, _seq FROM prev_next_id_state;
  IF _tick IS NULL THEN
      SET _msg = LEFT('prev_next_id_state has no row: run snowflake sql --generator again, and do not empty it', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  next_id: LOOP
    SET _zone = @@session.time_zone, time_zone = '+00:00';
    SET _us = CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED), time_zone = _zone;
    IF _us = _prev THEN
      SET _msg = LEFT('SYSDATE() did not move while prev_next_id waited: is the server run with --sysdate-is-now?', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    SET _prev = _us, _ms = _us DIV 1000;
    IF _ms < 1288834974657 THEN
      SET _msg = LEFT(CONCAT('the database clock reads Unix ms ', _ms, ', before the layout''s epoch, 2010-11-04T01:42:54.657Z (prev_next_id)'), 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    SET _now = (_ms - 1288834974657);
    IF _now > 2199023255551 THEN
      SET _msg = LEFT('IDs of this layout ran out at 2080-07-10T17:30:30.208Z (prev_next_id)', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    IF _now > _tick THEN
      SET _tick = _now, _seq = 0;
      LEAVE next_id;
    END IF;
    IF _now = _tick AND _seq < 4095 THEN
      SET _seq = _seq + 1;
      LEAVE next_id;
    END IF;
    -- The clock went back, or the sequence of its tick is used up: wait for
    -- the last ID's tick, or for the next.
    SET _behind = _tick + 1288834974657 - _ms;
    IF _behind > 5 THEN
      SET _msg = LEFT(CONCAT('the database clock went backwards by ', _behind, ' ms, more than the 5 ms tolerated; no IDs until it catches up (prev_next_id)'), 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    DO SLEEP(((IF(_now < _tick, _tick, _tick + 1) + 1288834974657) * 1000 - _us) / 1000000);
  END LOOP;
  UPDATE prev_next_id_state SET tick = _tick, seq = _seq;
  RETURN CAST((_tick << 22) | 151552 | _seq AS SIGNED);
END//

DELIMITER ;

-- SQL functions for Snowflake IDs of layout discord (time:42,worker:5,process:5,increment:12), made by `snowflake sql`.
-- Epoch 1420070400000 (2015-01-01T00:00:00.000Z); one tick is 1 ms; the last time an ID can hold is 5818116911103 (2154-05-15T07:35:11.103Z).
--
--   id = (time units << 22) | (worker << 17) | (process << 12) | increment
--   time units = (Unix ms - 1420070400000)
--
-- IDs of this layout use all 64 bits, but bigint is signed: an ID of 2^63 or
-- more is stored as its two's complement, id - 2^64, a negative bigint (what
-- reinterpreting the unsigned 64 bits as signed gives). These functions read
-- and write that form. The first such ID is from
-- 2084-09-06T15:47:35.552Z; IDs before then are positive. Negative IDs sort
-- below positive ones, so for WHERE id BETWEEN min_id(a) AND max_id(b), keep
-- a and b on the same side of that time (or split the range in two).
--
-- Pure functions, with no state and no table: DETERMINISTIC NO SQL, so binary
-- logging accepts them and a call with constants is worked out once. MySQL and
-- MariaDB allow no stored function in generated columns or partition bounds:
-- there, write the number a function gives (SELECT ..._min_id('2025-01-01')).
-- DATETIME has no time zone: these functions read and write UTC.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   discord_time(id) -> DATETIME(3)   the time of an ID
--   discord_worker(id) -> bigint   its worker field, 0 to 31
--   discord_process(id) -> bigint   its process field, 0 to 31
--   discord_increment(id) -> bigint   its increment field, 0 to 4095
--   discord_compose(ts, worker, process, increment) -> bigint   the ID of a time and field values
--   discord_min_id(ts) -> bigint, discord_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, discord_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN discord_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND discord_max_id(UTC_TIMESTAMP(3));
--   SELECT discord_compose(UTC_TIMESTAMP(3), 0, 0, 0);

-- The generator (--generator), installed after the functions:
--   discord_next_id() -> bigint   a new ID with worker=31, process=3
-- Its IDs are unique and increasing, and each one's time is the database
-- clock's when it was made. As a column's default:
--   CREATE TABLE posts (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, body TEXT);
--   CREATE TRIGGER posts_id BEFORE INSERT ON posts FOR EACH ROW
--     SET NEW.id = IF(NEW.id = 0, discord_next_id(), NEW.id);
--   (a trigger: MySQL and MariaDB take no stored function as a column default)
--
-- The state is the MyISAM table discord_next_id_state: the last ID's tick and sequence
-- number (MyISAM has no transactions, so a rollback cannot take it back).
-- MySQL locks it for each statement that calls the function, so callers take
-- turns; a long statement that makes many IDs holds the others up until it
-- ends. The function, and a trigger that calls it, run with their definer's
-- rights (SQL SECURITY DEFINER): users that insert need INSERT on the table and
-- nothing of the generator; users that call it need EXECUTE:
--   GRANT EXECUTE ON FUNCTION discord_next_id TO app;
-- No other user may have rights on the state (rights on the whole database
-- include it): one that can read it can hold its lock for as long as it reads.
-- With binary logging on, the server needs log_bin_trust_function_creators = 1
-- (to create the function and, in MariaDB, to run it), and binlog_format ROW
-- or MIXED: under STATEMENT a replica would make other IDs, so the function
-- refuses. The server must not run with --sysdate-is-now.
--
-- - Up to 4096 IDs a tick of 1 ms: one generator's ceiling. When a tick's are used
--   up, the call waits for the next tick; the sequence never wraps.
-- - The clock is read once a call, under the lock. If it reads earlier than the last
--   ID's tick by up to 5 ms, the call waits for it; further back, the call fails,
--   says by how much, and no ID is issued until the clock has caught up. No ID
--   carries a time later than the clock's.
-- - A rolled-back transaction burns its IDs: they are never issued again. The
--   state survives a restart. Never lower it: IDs would repeat.
-- - IDs run out at 2154-05-15T07:35:11.103Z (the generator's last tick).
-- - One node, one generator: the script refuses a generator whose IDs could
--   equal another's, comparing the bits their node fields fix, whatever their
--   prefixes and layouts.
--   It sees those in the databases of the server that the installing user has
--   some right in, and no others.
--   The view snowflake_generators lists them. One generator's rate is at most
--   the layout's ceiling: more takes more generators, with other node values.

DELIMITER //
DROP PROCEDURE IF EXISTS discord_next_id_install_check//
CREATE PROCEDURE discord_next_id_install_check()
BEGIN
  DECLARE _done INT DEFAULT 0;
  DECLARE _schema, _name VARCHAR(64);
  DECLARE _bits, _mask BIGINT UNSIGNED;
  DECLARE _description TEXT;
  DECLARE _comment, _layout VARCHAR(2048);
  DECLARE _msg VARCHAR(128);
  DECLARE _generators CURSOR FOR SELECT ROUTINE_SCHEMA AS schema_name, ROUTINE_NAME AS function_name,
  IF(LOCATE('; its IDs carry the node bits ', ROUTINE_COMMENT) > 0, CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(ROUTINE_COMMENT, '; its IDs carry the node bits ', -1),
    ' of the mask ', 1) AS UNSIGNED), NULL) AS node_bits,
  IF(LOCATE('; its IDs carry the node bits ', ROUTINE_COMMENT) > 0, CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(ROUTINE_COMMENT, ' of the mask ', -1),
    '.', 1) AS UNSIGNED), NULL) AS node_mask,
  ROUTINE_COMMENT AS description
FROM information_schema.ROUTINES
WHERE ROUTINE_TYPE = 'FUNCTION' AND LOCATE('Made by snowflake sql --generator', ROUTINE_COMMENT) > 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET _done = 1;
  -- One install at a time on the server, so that two cannot miss each other.
  IF GET_LOCK('snowflake sql --generator', 30) IS NOT TRUE THEN
    SET _msg = LEFT('another session has held the lock of generator installs (GET_LOCK ''snowflake sql --generator'') for 30 s; try again', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  -- A state of another layout under this prefix.
  SET _comment = (SELECT TABLE_COMMENT FROM information_schema.TABLES
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'discord_next_id_state');
  IF LOCATE(' for IDs of layout ', _comment) > 0
     AND LOCATE(' for IDs of layout time:42,worker:5,process:5,increment:12 epoch 1420070400000 tick 1 ms:', _comment) = 0 THEN
    SET _msg = LEFT('prefix discord has a generator of another layout; drop it first (see the comment of snowflake sql)', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF EXISTS (SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
      AND TABLE_NAME = 'snowflake_generators' AND TABLE_TYPE = 'BASE TABLE') THEN
    SET _layout = (SELECT layout FROM snowflake_generators WHERE prefix = 'discord');
    IF _layout <> 'time:42,worker:5,process:5,increment:12 epoch 1420070400000 tick 1 ms' THEN
      SET _msg = LEFT('prefix discord has a generator of another layout; drop it first (see the comment of snowflake sql)', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
  END IF;
  -- Every other generator the installer can see whose IDs could be this
  -- one's: where the node fields of both fix a bit, they fix it alike.
  OPEN _generators;
  generators: LOOP
    FETCH _generators INTO _schema, _name, _bits, _mask, _description;
    IF _done THEN
      LEAVE generators;
    END IF;
    IF _schema = DATABASE() AND _name = 'discord_next_id' THEN
      ITERATE generators;
    END IF;
    IF _bits IS NULL THEN
      IF _description <> 'A new Snowflake ID of layout discord with worker=31, process=3. Made by snowflake sql --generator.' THEN
        ITERATE generators;
      END IF;
    ELSEIF ((_bits ^ 4075520) & _mask & 4190208) <> 0 THEN
      ITERATE generators;
    END IF;
    SET _msg = LEFT(CONCAT('generator ', _schema, '.', _name, ' can issue the IDs of this one (worker=31, process=3): give this one other node values'), 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END LOOP;
  CLOSE _generators;
  -- The previous version's registry table, which the view replaces.
  IF EXISTS (SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
      AND TABLE_NAME = 'snowflake_generators' AND TABLE_TYPE = 'BASE TABLE') THEN
    PREPARE _drop FROM 'DROP TABLE snowflake_generators';
    EXECUTE _drop;
    DEALLOCATE PREPARE _drop;
  END IF;
END//
DELIMITER ;
CALL discord_next_id_install_check();
DROP PROCEDURE discord_next_id_install_check;

CREATE OR REPLACE SQL SECURITY INVOKER VIEW snowflake_generators AS
SELECT ROUTINE_SCHEMA AS schema_name, ROUTINE_NAME AS function_name,
  IF(LOCATE('; its IDs carry the node bits ', ROUTINE_COMMENT) > 0, CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(ROUTINE_COMMENT, '; its IDs carry the node bits ', -1),
    ' of the mask ', 1) AS UNSIGNED), NULL) AS node_bits,
  IF(LOCATE('; its IDs carry the node bits ', ROUTINE_COMMENT) > 0, CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(ROUTINE_COMMENT, ' of the mask ', -1),
    '.', 1) AS UNSIGNED), NULL) AS node_mask,
  ROUTINE_COMMENT AS description
FROM information_schema.ROUTINES
WHERE ROUTINE_TYPE = 'FUNCTION' AND LOCATE('Made by snowflake sql --generator', ROUTINE_COMMENT) > 0;

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS discord_time//
CREATE FUNCTION discord_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  SET _ms = CAST((id >> 22) & 4398046511103 AS SIGNED) + 1420070400000;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The worker field of an ID, 0 to 31.
DROP FUNCTION IF EXISTS discord_worker//
CREATE FUNCTION discord_worker(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  RETURN (id >> 17) & 31;
END//

-- The process field of an ID, 0 to 31.
DROP FUNCTION IF EXISTS discord_process//
CREATE FUNCTION discord_process(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  RETURN (id >> 12) & 31;
END//

-- The increment field of an ID, 0 to 4095.
DROP FUNCTION IF EXISTS discord_increment//
CREATE FUNCTION discord_increment(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  RETURN id & 4095;
END//

-- The ID of a time in UTC (floored to the tick) and field values.
DROP FUNCTION IF EXISTS discord_compose//
CREATE FUNCTION discord_compose(ts DATETIME(3), `worker` BIGINT, `process` BIGINT, `increment` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1420070400000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2015-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 5818116911103 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2154-05-15 07:35:11.103');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `worker` < 0 OR `worker` > 31 THEN
    SET _msg = CONCAT('worker ', `worker`, ' is out of range 0 to 31 (5 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `process` < 0 OR `process` > 31 THEN
    SET _msg = CONCAT('process ', `process`, ' is out of range 0 to 31 (5 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `increment` < 0 OR `increment` > 4095 THEN
    SET _msg = CONCAT('increment ', `increment`, ' is out of range 0 to 4095 (12 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1420070400000) << 22) | (`worker` << 17) | (`process` << 12) | `increment` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS discord_min_id//
CREATE FUNCTION discord_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1420070400000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2015-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 5818116911103 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2154-05-15 07:35:11.103');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1420070400000) << 22) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS discord_max_id//
CREATE FUNCTION discord_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1420070400000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2015-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 5818116911103 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2154-05-15 07:35:11.103');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1420070400000) << 22) | 4194303 AS SIGNED);
END//

DELIMITER ;
CREATE TABLE IF NOT EXISTS discord_next_id_state (
  tick BIGINT NOT NULL COMMENT 'the last ID''s tick',
  seq BIGINT NOT NULL COMMENT 'the last ID''s sequence number'
) ENGINE=MyISAM COMMENT 'The state of discord_next_id() for IDs of layout time:42,worker:5,process:5,increment:12 epoch 1420070400000 tick 1 ms: the last ID''s tick and sequence number. Never lower it: IDs would repeat.';
ALTER TABLE discord_next_id_state COMMENT 'The state of discord_next_id() for IDs of layout time:42,worker:5,process:5,increment:12 epoch 1420070400000 tick 1 ms: the last ID''s tick and sequence number. Never lower it: IDs would repeat.';
INSERT INTO discord_next_id_state (tick, seq) SELECT 0, 0 FROM DUAL WHERE NOT EXISTS (SELECT * FROM discord_next_id_state);

DELIMITER //

-- A new ID; see the comment above.
DROP FUNCTION IF EXISTS discord_next_id//
CREATE FUNCTION discord_next_id() RETURNS BIGINT
  NOT DETERMINISTIC MODIFIES SQL DATA
  COMMENT 'A new Snowflake ID of layout discord with worker=31, process=3: unique and increasing. Made by snowflake sql --generator; its IDs carry the node bits 4075520 of the mask 4190208.'
BEGIN
  DECLARE _tick, _seq BIGINT;      -- the last ID's, then the new one's
  DECLARE _us, _ms BIGINT;         -- the database clock, Unix microseconds and ms
  DECLARE _now BIGINT;             -- the clock's tick
  DECLARE _prev BIGINT DEFAULT -1; -- the clock's last reading
  DECLARE _behind BIGINT;          -- how far the clock is behind the last ID's tick, ms
  DECLARE _zone VARCHAR(64);
  DECLARE _msg VARCHAR(128);
  -- The format first: under ROW or MIXED, the one variable read.
  IF @@session.binlog_format = 'STATEMENT' AND @@log_bin = 1 AND @@session.sql_log_bin = 1 THEN
      SET _msg = LEFT('binlog_format is STATEMENT: a replica would make other IDs; set it to MIXED or ROW (discord_next_id)', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SELECT tick, seq INTO _tick, _seq FROM discord_next_id_state;
  IF _tick IS NULL THEN
      SET _msg = LEFT('discord_next_id_state has no row: run snowflake sql --generator again, and do not empty it', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  next_id: LOOP
    SET _zone = @@session.time_zone, time_zone = '+00:00';
    SET _us = CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED), time_zone = _zone;
    IF _us = _prev THEN
      SET _msg = LEFT('SYSDATE() did not move while discord_next_id waited: is the server run with --sysdate-is-now?', 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    SET _prev = _us, _ms = _us DIV 1000;
    IF _ms < 1420070400000 THEN
      SET _msg = LEFT(CONCAT('the database clock reads Unix ms ', _ms, ', before the layout''s epoch, 2015-01-01T00:00:00.000Z (discord_next_id)'), 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    SET _now = (_ms - 1420070400000);
    IF _now > 4398046511103 THEN
      SET _msg = LEFT('IDs of this layout ran out at 2154-05-15T07:35:11.103Z (discord_next_id)', 128);
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
    SET _behind = _tick + 1420070400000 - _ms;
    IF _behind > 5 THEN
      SET _msg = LEFT(CONCAT('the database clock went backwards by ', _behind, ' ms, more than the 5 ms tolerated; no IDs until it catches up (discord_next_id)'), 128);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
    END IF;
    DO SLEEP(((IF(_now < _tick, _tick, _tick + 1) + 1420070400000) * 1000 - _us) / 1000000);
  END LOOP;
  UPDATE discord_next_id_state SET tick = _tick, seq = _seq;
  RETURN CAST((_tick << 22) | 4075520 | _seq AS SIGNED);
END//

DELIMITER ;
DO RELEASE_LOCK('snowflake sql --generator');

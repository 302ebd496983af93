-- SQL functions for Snowflake IDs of layout sonyflake (time:39,sequence:8,machine:16), made by `snowflake sql`.
-- Epoch 1409529600000 (2014-09-01T00:00:00.000Z); one tick is 10 ms; the last time an ID can hold is 6907087738879 (2188-11-16T03:28:58.879Z).
--
--   id = (time units << 24) | (sequence << 16) | machine
--   time units = ((Unix ms - 1409529600000) / 10), rounded down
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
--   sonyflake_time(id) -> DATETIME(3)   the time of an ID
--   sonyflake_sequence(id) -> bigint   its sequence field, 0 to 255
--   sonyflake_machine(id) -> bigint   its machine field, 0 to 65535
--   sonyflake_compose(ts, sequence, machine) -> bigint   the ID of a time and field values
--   sonyflake_min_id(ts) -> bigint, sonyflake_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, sonyflake_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN sonyflake_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND sonyflake_max_id(UTC_TIMESTAMP(3));
--   SELECT sonyflake_compose(UTC_TIMESTAMP(3), 0, 0);

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS sonyflake_time//
CREATE FUNCTION sonyflake_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SET _ms = CAST((id >> 24) & 549755813887 AS SIGNED) * 10 + 1409529600000;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The sequence field of an ID, 0 to 255.
DROP FUNCTION IF EXISTS sonyflake_sequence//
CREATE FUNCTION sonyflake_sequence(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN (id >> 16) & 255;
END//

-- The machine field of an ID, 0 to 65535.
DROP FUNCTION IF EXISTS sonyflake_machine//
CREATE FUNCTION sonyflake_machine(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN id & 65535;
END//

-- The ID of a time in UTC (floored to the tick) and field values.
DROP FUNCTION IF EXISTS sonyflake_compose//
CREATE FUNCTION sonyflake_compose(ts DATETIME(3), `sequence` BIGINT, `machine` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1409529600000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2014-09-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 6907087738879 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2188-11-16 03:28:58.879');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `sequence` < 0 OR `sequence` > 255 THEN
    SET _msg = CONCAT('sequence ', `sequence`, ' is out of range 0 to 255 (8 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `machine` < 0 OR `machine` > 65535 THEN
    SET _msg = CONCAT('machine ', `machine`, ' is out of range 0 to 65535 (16 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST((((_ms - 1409529600000) DIV 10) << 24) | (`sequence` << 16) | `machine` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS sonyflake_min_id//
CREATE FUNCTION sonyflake_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1409529600000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2014-09-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 6907087738879 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2188-11-16 03:28:58.879');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST((((_ms - 1409529600000) DIV 10) << 24) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS sonyflake_max_id//
CREATE FUNCTION sonyflake_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1409529600000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2014-09-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 6907087738879 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2188-11-16 03:28:58.879');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST((((_ms - 1409529600000) DIV 10) << 24) | 16777215 AS SIGNED);
END//

DELIMITER ;

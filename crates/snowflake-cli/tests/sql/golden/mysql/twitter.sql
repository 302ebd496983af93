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
--   twitter_time(id) -> DATETIME(3)   the time of an ID
--   twitter_datacenter(id) -> bigint   its datacenter field, 0 to 31
--   twitter_machine(id) -> bigint   its machine field, 0 to 31
--   twitter_sequence(id) -> bigint   its sequence field, 0 to 4095
--   twitter_compose(ts, datacenter, machine, sequence) -> bigint   the ID of a time and field values
--   twitter_min_id(ts) -> bigint, twitter_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, twitter_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN twitter_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND twitter_max_id(UTC_TIMESTAMP(3));
--   SELECT twitter_compose(UTC_TIMESTAMP(3), 0, 0, 0);

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS twitter_time//
CREATE FUNCTION twitter_time(id BIGINT) RETURNS DATETIME(3)
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
DROP FUNCTION IF EXISTS twitter_datacenter//
CREATE FUNCTION twitter_datacenter(id BIGINT) RETURNS BIGINT
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
DROP FUNCTION IF EXISTS twitter_machine//
CREATE FUNCTION twitter_machine(id BIGINT) RETURNS BIGINT
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
DROP FUNCTION IF EXISTS twitter_sequence//
CREATE FUNCTION twitter_sequence(id BIGINT) RETURNS BIGINT
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
DROP FUNCTION IF EXISTS twitter_compose//
CREATE FUNCTION twitter_compose(ts DATETIME(3), `datacenter` BIGINT, `machine` BIGINT, `sequence` BIGINT) RETURNS BIGINT
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
DROP FUNCTION IF EXISTS twitter_min_id//
CREATE FUNCTION twitter_min_id(ts DATETIME(3)) RETURNS BIGINT
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
DROP FUNCTION IF EXISTS twitter_max_id//
CREATE FUNCTION twitter_max_id(ts DATETIME(3)) RETURNS BIGINT
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

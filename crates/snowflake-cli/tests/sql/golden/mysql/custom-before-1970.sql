-- SQL functions for Snowflake IDs of layout time:41,node:10,sequence:12 (time:41,node:10,sequence:12), made by `snowflake sql`.
-- Epoch -86400000 (1969-12-31T00:00:00.000Z); one tick is 1 ms; the last time an ID can hold is 2198936855551 (2039-09-06T15:47:35.551Z).
--
--   id = (time units << 22) | (node << 12) | sequence
--   time units = (Unix ms + 86400000)
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
--   posts_time(id) -> DATETIME(3)   the time of an ID
--   posts_node(id) -> bigint   its node field, 0 to 1023
--   posts_sequence(id) -> bigint   its sequence field, 0 to 4095
--   posts_compose(ts, node, sequence) -> bigint   the ID of a time and field values
--   posts_min_id(ts) -> bigint, posts_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, posts_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN posts_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND posts_max_id(UTC_TIMESTAMP(3));
--   SELECT posts_compose(UTC_TIMESTAMP(3), 0, 0);

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS posts_time//
CREATE FUNCTION posts_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SET _ms = CAST((id >> 22) & 2199023255551 AS SIGNED) - 86400000;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The node field of an ID, 0 to 1023.
DROP FUNCTION IF EXISTS posts_node//
CREATE FUNCTION posts_node(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN (id >> 12) & 1023;
END//

-- The sequence field of an ID, 0 to 4095.
DROP FUNCTION IF EXISTS posts_sequence//
CREATE FUNCTION posts_sequence(id BIGINT) RETURNS BIGINT
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
DROP FUNCTION IF EXISTS posts_compose//
CREATE FUNCTION posts_compose(ts DATETIME(3), `node` BIGINT, `sequence` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < -86400000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 1969-12-31 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 2198936855551 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2039-09-06 15:47:35.551');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `node` < 0 OR `node` > 1023 THEN
    SET _msg = CONCAT('node ', `node`, ' is out of range 0 to 1023 (10 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `sequence` < 0 OR `sequence` > 4095 THEN
    SET _msg = CONCAT('sequence ', `sequence`, ' is out of range 0 to 4095 (12 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms + 86400000) << 22) | (`node` << 12) | `sequence` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS posts_min_id//
CREATE FUNCTION posts_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < -86400000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 1969-12-31 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 2198936855551 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2039-09-06 15:47:35.551');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms + 86400000) << 22) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS posts_max_id//
CREATE FUNCTION posts_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < -86400000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 1969-12-31 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 2198936855551 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2039-09-06 15:47:35.551');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms + 86400000) << 22) | 4194303 AS SIGNED);
END//

DELIMITER ;

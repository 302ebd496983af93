-- SQL functions for Snowflake IDs of layout time:50,sequence:13 (time:50,sequence:13), made by `snowflake sql`.
-- Epoch -300000000000000 (-007537-05-18T18:40:00.000Z); one tick is 1 ms; the last time an ID can hold is 825899906842623 (+028141-09-22T16:47:22.623Z).
--
--   id = (time units << 13) | sequence
--   time units = (Unix ms + 300000000000000)
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
--   snowflake_time(id) -> DATETIME(3)   the time of an ID
--   snowflake_sequence(id) -> bigint   its sequence field, 0 to 8191
--   snowflake_compose(ts, sequence) -> bigint   the ID of a time and field values
--   snowflake_min_id(ts) -> bigint, snowflake_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, snowflake_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN snowflake_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND snowflake_max_id(UTC_TIMESTAMP(3));
--   SELECT snowflake_compose(UTC_TIMESTAMP(3), 0);

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS snowflake_time//
CREATE FUNCTION snowflake_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SET _ms = CAST((id >> 13) & 1125899906842623 AS SIGNED) - 300000000000000;
  IF _ms < -30610224000000 OR _ms > 253402300799999 THEN
    SET _msg = CONCAT('id ', id, ' is from Unix ms ', _ms, ', which DATETIME cannot hold (years 1000 to 9999)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The sequence field of an ID, 0 to 8191.
DROP FUNCTION IF EXISTS snowflake_sequence//
CREATE FUNCTION snowflake_sequence(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 THEN
    SET _msg = CONCAT('id ', id, ' is negative, but the layout keeps its sign bit 0');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN id & 8191;
END//

-- The ID of a time in UTC (floored to the tick) and field values.
DROP FUNCTION IF EXISTS snowflake_compose//
CREATE FUNCTION snowflake_compose(ts DATETIME(3), `sequence` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF `sequence` < 0 OR `sequence` > 8191 THEN
    SET _msg = CONCAT('sequence ', `sequence`, ' is out of range 0 to 8191 (13 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms + 300000000000000) << 13) | `sequence` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS snowflake_min_id//
CREATE FUNCTION snowflake_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  RETURN CAST(((_ms + 300000000000000) << 13) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS snowflake_max_id//
CREATE FUNCTION snowflake_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  RETURN CAST(((_ms + 300000000000000) << 13) | 8191 AS SIGNED);
END//

DELIMITER ;

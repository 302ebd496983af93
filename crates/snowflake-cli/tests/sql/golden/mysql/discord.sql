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

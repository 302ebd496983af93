-- SQL functions for Snowflake IDs of layout mastodon (time:48,sequence:16), made by `snowflake sql`.
-- Epoch 0 (1970-01-01T00:00:00.000Z); one tick is 1 ms; the last time an ID can hold is 281474976710655 (+010889-08-02T05:31:50.655Z).
--
--   id = (time units << 16) | sequence
--   time units = Unix ms
--
-- IDs of this layout use all 64 bits, but bigint is signed: an ID of 2^63 or
-- more is stored as its two's complement, id - 2^64, a negative bigint (what
-- reinterpreting the unsigned 64 bits as signed gives). These functions read
-- and write that form. The first such ID is from
-- 6429-10-17T02:45:55.328Z; IDs before then are positive. Negative IDs sort
-- below positive ones, so for WHERE id BETWEEN min_id(a) AND max_id(b), keep
-- a and b on the same side of that time (or split the range in two).
--
-- Pure functions, with no state and no table: DETERMINISTIC NO SQL, so binary
-- logging accepts them and a call with constants is worked out once. MySQL and
-- MariaDB allow no stored function in generated columns or partition bounds:
-- there, write the number a function gives (SELECT ..._min_id('2025-01-01')).
-- DATETIME has no time zone: these functions read and write UTC.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   mastodon_time(id) -> DATETIME(3)   the time of an ID
--   mastodon_sequence(id) -> bigint   its sequence field, 0 to 65535
--   mastodon_compose(ts, sequence) -> bigint   the ID of a time and field values
--   mastodon_min_id(ts) -> bigint, mastodon_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, mastodon_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN mastodon_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND mastodon_max_id(UTC_TIMESTAMP(3));
--   SELECT mastodon_compose(UTC_TIMESTAMP(3), 0);

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS mastodon_time//
CREATE FUNCTION mastodon_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  DECLARE _msg VARCHAR(128);
  SET _ms = CAST((id >> 16) & 281474976710655 AS SIGNED);
  IF _ms < -30610224000000 OR _ms > 253402300799999 THEN
    SET _msg = CONCAT('id ', id, ' is from Unix ms ', _ms, ', which DATETIME cannot hold (years 1000 to 9999)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The sequence field of an ID, 0 to 65535.
DROP FUNCTION IF EXISTS mastodon_sequence//
CREATE FUNCTION mastodon_sequence(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  RETURN id & 65535;
END//

-- The ID of a time in UTC (floored to the tick) and field values.
DROP FUNCTION IF EXISTS mastodon_compose//
CREATE FUNCTION mastodon_compose(ts DATETIME(3), `sequence` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 0 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 1970-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `sequence` < 0 OR `sequence` > 65535 THEN
    SET _msg = CONCAT('sequence ', `sequence`, ' is out of range 0 to 65535 (16 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST((_ms << 16) | `sequence` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS mastodon_min_id//
CREATE FUNCTION mastodon_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 0 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 1970-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST((_ms << 16) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS mastodon_max_id//
CREATE FUNCTION mastodon_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 0 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 1970-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST((_ms << 16) | 65535 AS SIGNED);
END//

DELIMITER ;

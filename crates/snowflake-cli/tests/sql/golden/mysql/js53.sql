-- SQL functions for Snowflake IDs of layout js53 (time:41,worker:6,sequence:6), made by `snowflake sql`.
-- Epoch 1704067200000 (2024-01-01T00:00:00.000Z); one tick is 1 ms; the last time an ID can hold is 3903090455551 (2093-09-06T15:47:35.551Z).
--
--   id = (time units << 12) | (worker << 6) | sequence
--   time units = (Unix ms - 1704067200000)
--
-- The layout uses 53 bits: IDs are 0 to 9007199254740991; these functions refuse others.
--
-- Pure functions, with no state and no table: DETERMINISTIC NO SQL, so binary
-- logging accepts them and a call with constants is worked out once. MySQL and
-- MariaDB allow no stored function in generated columns or partition bounds:
-- there, write the number a function gives (SELECT ..._min_id('2025-01-01')).
-- DATETIME has no time zone: these functions read and write UTC.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   js53_time(id) -> DATETIME(3)   the time of an ID
--   js53_worker(id) -> bigint   its worker field, 0 to 63
--   js53_sequence(id) -> bigint   its sequence field, 0 to 63
--   js53_compose(ts, worker, sequence) -> bigint   the ID of a time and field values
--   js53_min_id(ts) -> bigint, js53_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, js53_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN js53_min_id(UTC_TIMESTAMP(3) - INTERVAL 1 DAY) AND js53_max_id(UTC_TIMESTAMP(3));
--   SELECT js53_compose(UTC_TIMESTAMP(3), 0, 0);

DELIMITER //

-- The time of an ID, in UTC: the start of its tick.
DROP FUNCTION IF EXISTS js53_time//
CREATE FUNCTION js53_time(id BIGINT) RETURNS DATETIME(3)
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT NULL;
  DECLARE _msg VARCHAR(128);
  IF id < 0 OR id > 9007199254740991 THEN
    SET _msg = CONCAT('id ', id, ' is out of range 0 to 9007199254740991: the layout uses 53 bits');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  SET _ms = CAST((id >> 12) & 2199023255551 AS SIGNED) + 1704067200000;
  RETURN TIMESTAMPADD(MICROSECOND, _ms * 1000, TIMESTAMP'1970-01-01 00:00:00');
END//

-- The worker field of an ID, 0 to 63.
DROP FUNCTION IF EXISTS js53_worker//
CREATE FUNCTION js53_worker(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 OR id > 9007199254740991 THEN
    SET _msg = CONCAT('id ', id, ' is out of range 0 to 9007199254740991: the layout uses 53 bits');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN (id >> 6) & 63;
END//

-- The sequence field of an ID, 0 to 63.
DROP FUNCTION IF EXISTS js53_sequence//
CREATE FUNCTION js53_sequence(id BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _msg VARCHAR(128);
  IF id < 0 OR id > 9007199254740991 THEN
    SET _msg = CONCAT('id ', id, ' is out of range 0 to 9007199254740991: the layout uses 53 bits');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN id & 63;
END//

-- The ID of a time in UTC (floored to the tick) and field values.
DROP FUNCTION IF EXISTS js53_compose//
CREATE FUNCTION js53_compose(ts DATETIME(3), `worker` BIGINT, `sequence` BIGINT) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1704067200000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2024-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 3903090455551 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2093-09-06 15:47:35.551');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `worker` < 0 OR `worker` > 63 THEN
    SET _msg = CONCAT('worker ', `worker`, ' is out of range 0 to 63 (6 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF `sequence` < 0 OR `sequence` > 63 THEN
    SET _msg = CONCAT('sequence ', `sequence`, ' is out of range 0 to 63 (6 bits)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1704067200000) << 12) | (`worker` << 6) | `sequence` AS SIGNED);
END//

-- The smallest ID of ts's tick.
DROP FUNCTION IF EXISTS js53_min_id//
CREATE FUNCTION js53_min_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1704067200000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2024-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 3903090455551 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2093-09-06 15:47:35.551');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1704067200000) << 12) AS SIGNED);
END//

-- The largest ID of ts's tick.
DROP FUNCTION IF EXISTS js53_max_id//
CREATE FUNCTION js53_max_id(ts DATETIME(3)) RETURNS BIGINT
  DETERMINISTIC NO SQL
BEGIN
  DECLARE _ms BIGINT DEFAULT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', ts) DIV 1000;
  DECLARE _msg VARCHAR(128);
  IF _ms < 1704067200000 THEN
    SET _msg = CONCAT('ts ', ts, ' is before the layout''s epoch, 2024-01-01 00:00:00.000');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  IF _ms > 3903090455551 THEN
    SET _msg = CONCAT('ts ', ts, ' is after the last time the layout can encode, 2093-09-06 15:47:35.551');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = _msg;
  END IF;
  RETURN CAST(((_ms - 1704067200000) << 12) | 4095 AS SIGNED);
END//

DELIMITER ;

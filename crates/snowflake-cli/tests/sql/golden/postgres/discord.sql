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
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   discord_time(id) -> timestamptz   the time of an ID
--   discord_worker(id) -> bigint   its worker field, 0 to 31
--   discord_process(id) -> bigint   its process field, 0 to 31
--   discord_increment(id) -> bigint   its increment field, 0 to 4095
--   discord_compose(ts, worker, process, increment) -> bigint   the ID of a time and field values
--   discord_min_id(ts) -> bigint, discord_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, discord_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN discord_min_id(now() - interval '1 day') AND discord_max_id(now());
--   SELECT discord_compose(now(), 0, 0, 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION discord_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  _ms := ((id >> 22) & 4398046511103) + 1420070400000;
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The worker field of an ID, 0 to 31.
CREATE OR REPLACE FUNCTION discord_worker(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (id >> 17) & 31;
END
$$;

-- The process field of an ID, 0 to 31.
CREATE OR REPLACE FUNCTION discord_process(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (id >> 12) & 31;
END
$$;

-- The increment field of an ID, 0 to 4095.
CREATE OR REPLACE FUNCTION discord_increment(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN id & 4095;
END
$$;

-- The ID of a time (floored to the tick) and field values.
CREATE OR REPLACE FUNCTION discord_compose(ts timestamptz, "worker" bigint, "process" bigint, "increment" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1420070400000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2015-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 5818116911103 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2154-05-15T07:35:11.103Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "worker" < 0 OR "worker" > 31 THEN
    RAISE EXCEPTION 'worker % is out of range 0 to 31 (5 bits)', "worker"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "process" < 0 OR "process" > 31 THEN
    RAISE EXCEPTION 'process % is out of range 0 to 31 (5 bits)', "process"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "increment" < 0 OR "increment" > 4095 THEN
    RAISE EXCEPTION 'increment % is out of range 0 to 4095 (12 bits)', "increment"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN ((_ms - 1420070400000) << 22) | ("worker" << 17) | ("process" << 12) | "increment";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION discord_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1420070400000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2015-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 5818116911103 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2154-05-15T07:35:11.103Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms - 1420070400000) << 22);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION discord_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1420070400000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2015-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 5818116911103 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2154-05-15T07:35:11.103Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms - 1420070400000) << 22) | 4194303;
END
$$;


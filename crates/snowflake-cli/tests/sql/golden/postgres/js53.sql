-- SQL functions for Snowflake IDs of layout js53 (time:41,worker:6,sequence:6), made by `snowflake sql`.
-- Epoch 1704067200000 (2024-01-01T00:00:00.000Z); one tick is 1 ms; the last time an ID can hold is 3903090455551 (2093-09-06T15:47:35.551Z).
--
--   id = (time units << 12) | (worker << 6) | sequence
--   time units = (Unix ms - 1704067200000)
--
-- The layout uses 53 bits: IDs are 0 to 9007199254740991; these functions refuse others.
--
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   js53_time(id) -> timestamptz   the time of an ID
--   js53_worker(id) -> bigint   its worker field, 0 to 63
--   js53_sequence(id) -> bigint   its sequence field, 0 to 63
--   js53_compose(ts, worker, sequence) -> bigint   the ID of a time and field values
--   js53_min_id(ts) -> bigint, js53_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, js53_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN js53_min_id(now() - interval '1 day') AND js53_max_id(now());
--   SELECT js53_compose(now(), 0, 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION js53_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  IF id < 0 OR id > 9007199254740991 THEN
    RAISE EXCEPTION 'id % is out of range 0 to 9007199254740991: the layout uses 53 bits', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  _ms := ((id >> 12) & 2199023255551) + 1704067200000;
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The worker field of an ID, 0 to 63.
CREATE OR REPLACE FUNCTION js53_worker(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 OR id > 9007199254740991 THEN
    RAISE EXCEPTION 'id % is out of range 0 to 9007199254740991: the layout uses 53 bits', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (id >> 6) & 63;
END
$$;

-- The sequence field of an ID, 0 to 63.
CREATE OR REPLACE FUNCTION js53_sequence(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 OR id > 9007199254740991 THEN
    RAISE EXCEPTION 'id % is out of range 0 to 9007199254740991: the layout uses 53 bits', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN id & 63;
END
$$;

-- The ID of a time (floored to the tick) and field values.
CREATE OR REPLACE FUNCTION js53_compose(ts timestamptz, "worker" bigint, "sequence" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1704067200000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2024-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 3903090455551 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2093-09-06T15:47:35.551Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "worker" < 0 OR "worker" > 63 THEN
    RAISE EXCEPTION 'worker % is out of range 0 to 63 (6 bits)', "worker"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "sequence" < 0 OR "sequence" > 63 THEN
    RAISE EXCEPTION 'sequence % is out of range 0 to 63 (6 bits)', "sequence"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN ((_ms - 1704067200000) << 12) | ("worker" << 6) | "sequence";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION js53_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1704067200000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2024-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 3903090455551 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2093-09-06T15:47:35.551Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms - 1704067200000) << 12);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION js53_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1704067200000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2024-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 3903090455551 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2093-09-06T15:47:35.551Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms - 1704067200000) << 12) | 4095;
END
$$;


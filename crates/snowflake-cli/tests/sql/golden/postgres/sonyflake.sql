-- SQL functions for Snowflake IDs of layout sonyflake (time:39,sequence:8,machine:16), made by `snowflake sql`.
-- Epoch 1409529600000 (2014-09-01T00:00:00.000Z); one tick is 10 ms; the last time an ID can hold is 6907087738879 (2188-11-16T03:28:58.879Z).
--
--   id = (time units << 24) | (sequence << 16) | machine
--   time units = ((Unix ms - 1409529600000) / 10), rounded down
--
-- The top bit is a sign bit that stays 0, so every ID is a positive bigint;
-- these functions refuse a negative one.
--
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   sonyflake_time(id) -> timestamptz   the time of an ID
--   sonyflake_sequence(id) -> bigint   its sequence field, 0 to 255
--   sonyflake_machine(id) -> bigint   its machine field, 0 to 65535
--   sonyflake_compose(ts, sequence, machine) -> bigint   the ID of a time and field values
--   sonyflake_min_id(ts) -> bigint, sonyflake_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, sonyflake_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN sonyflake_min_id(now() - interval '1 day') AND sonyflake_max_id(now());
--   SELECT sonyflake_compose(now(), 0, 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION sonyflake_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  _ms := ((id >> 24) & 549755813887) * 10 + 1409529600000;
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The sequence field of an ID, 0 to 255.
CREATE OR REPLACE FUNCTION sonyflake_sequence(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (id >> 16) & 255;
END
$$;

-- The machine field of an ID, 0 to 65535.
CREATE OR REPLACE FUNCTION sonyflake_machine(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN id & 65535;
END
$$;

-- The ID of a time (floored to the tick) and field values.
CREATE OR REPLACE FUNCTION sonyflake_compose(ts timestamptz, "sequence" bigint, "machine" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1409529600000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2014-09-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 6907087738879 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2188-11-16T03:28:58.879Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "sequence" < 0 OR "sequence" > 255 THEN
    RAISE EXCEPTION 'sequence % is out of range 0 to 255 (8 bits)', "sequence"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "machine" < 0 OR "machine" > 65535 THEN
    RAISE EXCEPTION 'machine % is out of range 0 to 65535 (16 bits)', "machine"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (((_ms - 1409529600000) / 10) << 24) | ("sequence" << 16) | "machine";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION sonyflake_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1409529600000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2014-09-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 6907087738879 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2188-11-16T03:28:58.879Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN (((_ms - 1409529600000) / 10) << 24);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION sonyflake_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1409529600000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2014-09-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 6907087738879 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2188-11-16T03:28:58.879Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN (((_ms - 1409529600000) / 10) << 24) | 16777215;
END
$$;


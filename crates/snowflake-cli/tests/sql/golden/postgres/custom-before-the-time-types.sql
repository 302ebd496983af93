-- SQL functions for Snowflake IDs of layout time:50,sequence:13 (time:50,sequence:13), made by `snowflake sql`.
-- Epoch -300000000000000 (-007537-05-18T18:40:00.000Z); one tick is 1 ms; the last time an ID can hold is 825899906842623 (+028141-09-22T16:47:22.623Z).
--
--   id = (time units << 13) | sequence
--   time units = (Unix ms + 300000000000000)
--
-- The top bit is a sign bit that stays 0, so every ID is a positive bigint;
-- these functions refuse a negative one.
--
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   snowflake_time(id) -> timestamptz   the time of an ID
--   snowflake_sequence(id) -> bigint   its sequence field, 0 to 8191
--   snowflake_compose(ts, sequence) -> bigint   the ID of a time and field values
--   snowflake_min_id(ts) -> bigint, snowflake_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, snowflake_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN snowflake_min_id(now() - interval '1 day') AND snowflake_max_id(now());
--   SELECT snowflake_compose(now(), 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION snowflake_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  _ms := ((id >> 13) & 1125899906842623) - 300000000000000;
  IF _ms < -210866803200000 OR _ms > 9224318015999999 THEN
    RAISE EXCEPTION 'id % is from Unix ms %, which timestamptz cannot hold (4714 BC to 294276 AD)', id, _ms
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The sequence field of an ID, 0 to 8191.
CREATE OR REPLACE FUNCTION snowflake_sequence(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN id & 8191;
END
$$;

-- The ID of a time (floored to the tick) and field values.
CREATE OR REPLACE FUNCTION snowflake_compose(ts timestamptz, "sequence" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms > 825899906842623 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, +028141-09-22T16:47:22.623Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "sequence" < 0 OR "sequence" > 8191 THEN
    RAISE EXCEPTION 'sequence % is out of range 0 to 8191 (13 bits)', "sequence"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN ((_ms + 300000000000000) << 13) | "sequence";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION snowflake_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms > 825899906842623 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, +028141-09-22T16:47:22.623Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms + 300000000000000) << 13);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION snowflake_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms > 825899906842623 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, +028141-09-22T16:47:22.623Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms + 300000000000000) << 13) | 8191;
END
$$;


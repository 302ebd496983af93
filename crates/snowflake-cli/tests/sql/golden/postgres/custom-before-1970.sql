-- SQL functions for Snowflake IDs of layout time:41,node:10,sequence:12 (time:41,node:10,sequence:12), made by `snowflake sql`.
-- Epoch -86400000 (1969-12-31T00:00:00.000Z); one tick is 1 ms; the last time an ID can hold is 2198936855551 (2039-09-06T15:47:35.551Z).
--
--   id = (time units << 22) | (node << 12) | sequence
--   time units = (Unix ms + 86400000)
--
-- The top bit is a sign bit that stays 0, so every ID is a positive bigint;
-- these functions refuse a negative one.
--
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   posts_time(id) -> timestamptz   the time of an ID
--   posts_node(id) -> bigint   its node field, 0 to 1023
--   posts_sequence(id) -> bigint   its sequence field, 0 to 4095
--   posts_compose(ts, node, sequence) -> bigint   the ID of a time and field values
--   posts_min_id(ts) -> bigint, posts_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, posts_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN posts_min_id(now() - interval '1 day') AND posts_max_id(now());
--   SELECT posts_compose(now(), 0, 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION posts_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  _ms := ((id >> 22) & 2199023255551) - 86400000;
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The node field of an ID, 0 to 1023.
CREATE OR REPLACE FUNCTION posts_node(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (id >> 12) & 1023;
END
$$;

-- The sequence field of an ID, 0 to 4095.
CREATE OR REPLACE FUNCTION posts_sequence(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN id & 4095;
END
$$;

-- The ID of a time (floored to the tick) and field values.
CREATE OR REPLACE FUNCTION posts_compose(ts timestamptz, "node" bigint, "sequence" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < -86400000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 1969-12-31T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 2198936855551 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2039-09-06T15:47:35.551Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "node" < 0 OR "node" > 1023 THEN
    RAISE EXCEPTION 'node % is out of range 0 to 1023 (10 bits)', "node"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "sequence" < 0 OR "sequence" > 4095 THEN
    RAISE EXCEPTION 'sequence % is out of range 0 to 4095 (12 bits)', "sequence"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN ((_ms + 86400000) << 22) | ("node" << 12) | "sequence";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION posts_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < -86400000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 1969-12-31T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 2198936855551 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2039-09-06T15:47:35.551Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms + 86400000) << 22);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION posts_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < -86400000 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 1969-12-31T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 2198936855551 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2039-09-06T15:47:35.551Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms + 86400000) << 22) | 4194303;
END
$$;


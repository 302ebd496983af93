-- SQL functions for Snowflake IDs of layout twitter (time:41,datacenter:5,machine:5,sequence:12), made by `snowflake sql`.
-- Epoch 1288834974657 (2010-11-04T01:42:54.657Z); one tick is 1 ms; the last time an ID can hold is 3487858230208 (2080-07-10T17:30:30.208Z).
--
--   id = (time units << 22) | (datacenter << 17) | (machine << 12) | sequence
--   time units = (Unix ms - 1288834974657)
--
-- The top bit is a sign bit that stays 0, so every ID is a positive bigint;
-- these functions refuse a negative one.
--
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   twitter_time(id) -> timestamptz   the time of an ID
--   twitter_datacenter(id) -> bigint   its datacenter field, 0 to 31
--   twitter_machine(id) -> bigint   its machine field, 0 to 31
--   twitter_sequence(id) -> bigint   its sequence field, 0 to 4095
--   twitter_compose(ts, datacenter, machine, sequence) -> bigint   the ID of a time and field values
--   twitter_min_id(ts) -> bigint, twitter_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, twitter_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN twitter_min_id(now() - interval '1 day') AND twitter_max_id(now());
--   SELECT twitter_compose(now(), 0, 0, 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION twitter_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  _ms := ((id >> 22) & 2199023255551) + 1288834974657;
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The datacenter field of an ID, 0 to 31.
CREATE OR REPLACE FUNCTION twitter_datacenter(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (id >> 17) & 31;
END
$$;

-- The machine field of an ID, 0 to 31.
CREATE OR REPLACE FUNCTION twitter_machine(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'id % is negative, but the layout keeps its sign bit 0; its IDs are 0 to 9223372036854775807', id
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (id >> 12) & 31;
END
$$;

-- The sequence field of an ID, 0 to 4095.
CREATE OR REPLACE FUNCTION twitter_sequence(id bigint) RETURNS bigint
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
CREATE OR REPLACE FUNCTION twitter_compose(ts timestamptz, "datacenter" bigint, "machine" bigint, "sequence" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1288834974657 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2010-11-04T01:42:54.657Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 3487858230208 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2080-07-10T17:30:30.208Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "datacenter" < 0 OR "datacenter" > 31 THEN
    RAISE EXCEPTION 'datacenter % is out of range 0 to 31 (5 bits)', "datacenter"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "machine" < 0 OR "machine" > 31 THEN
    RAISE EXCEPTION 'machine % is out of range 0 to 31 (5 bits)', "machine"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF "sequence" < 0 OR "sequence" > 4095 THEN
    RAISE EXCEPTION 'sequence % is out of range 0 to 4095 (12 bits)', "sequence"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN ((_ms - 1288834974657) << 22) | ("datacenter" << 17) | ("machine" << 12) | "sequence";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION twitter_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1288834974657 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2010-11-04T01:42:54.657Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 3487858230208 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2080-07-10T17:30:30.208Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms - 1288834974657) << 22);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION twitter_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 1288834974657 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 2010-11-04T01:42:54.657Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 3487858230208 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, 2080-07-10T17:30:30.208Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN ((_ms - 1288834974657) << 22) | 4194303;
END
$$;


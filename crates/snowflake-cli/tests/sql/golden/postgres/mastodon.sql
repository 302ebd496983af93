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
-- Pure functions, with no state and no table: IMMUTABLE STRICT PARALLEL SAFE,
-- so they can be used in indexes, generated columns and partition bounds.
-- NULL in gives NULL out; values out of range raise an error that names them.
--   mastodon_time(id) -> timestamptz   the time of an ID
--   mastodon_sequence(id) -> bigint   its sequence field, 0 to 65535
--   mastodon_compose(ts, sequence) -> bigint   the ID of a time and field values
--   mastodon_min_id(ts) -> bigint, mastodon_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, mastodon_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN mastodon_min_id(now() - interval '1 day') AND mastodon_max_id(now());
--   SELECT mastodon_compose(now(), 0);

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION mastodon_time(id bigint) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint;
  _days bigint;
BEGIN
  _ms := ((id >> 16) & 281474976710655);
  _days := _ms / 86400000 - CASE WHEN _ms % 86400000 < 0 THEN 1 ELSE 0 END;
  RETURN ((date '1970-01-01' + _days::integer)
    + (_ms - _days * 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';
END
$$;

-- The sequence field of an ID, 0 to 65535.
CREATE OR REPLACE FUNCTION mastodon_sequence(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN id & 65535;
END
$$;

-- The ID of a time (floored to the tick) and field values.
CREATE OR REPLACE FUNCTION mastodon_compose(ts timestamptz, "sequence" bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 0 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 1970-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 281474976710655 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, +010889-08-02T05:31:50.655Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF "sequence" < 0 OR "sequence" > 65535 THEN
    RAISE EXCEPTION 'sequence % is out of range 0 to 65535 (16 bits)', "sequence"
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN (_ms << 16) | "sequence";
END
$$;

-- The smallest ID of ts's tick.
CREATE OR REPLACE FUNCTION mastodon_min_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 0 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 1970-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 281474976710655 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, +010889-08-02T05:31:50.655Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN (_ms << 16);
END
$$;

-- The largest ID of ts's tick.
CREATE OR REPLACE FUNCTION mastodon_max_id(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  _ms bigint := floor(extract(epoch FROM ts - to_timestamp(0)) * 1000);
BEGIN
  IF _ms < 0 THEN
    RAISE EXCEPTION 'ts % is before the layout''s epoch, 1970-01-01T00:00:00.000Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  IF _ms > 281474976710655 THEN
    RAISE EXCEPTION 'ts % is after the last time the layout can encode, +010889-08-02T05:31:50.655Z', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      USING ERRCODE = 'datetime_field_overflow';
  END IF;
  RETURN (_ms << 16) | 65535;
END
$$;


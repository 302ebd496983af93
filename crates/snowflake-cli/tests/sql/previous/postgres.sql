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
--   prev_time(id) -> timestamptz   the time of an ID
--   prev_datacenter(id) -> bigint   its datacenter field, 0 to 31
--   prev_machine(id) -> bigint   its machine field, 0 to 31
--   prev_sequence(id) -> bigint   its sequence field, 0 to 4095
--   prev_compose(ts, datacenter, machine, sequence) -> bigint   the ID of a time and field values
--   prev_min_id(ts) -> bigint, prev_max_id(ts) -> bigint   the smallest and largest ID of ts's tick
--
-- For example:
--   SELECT id, prev_time(id) FROM posts;
--   SELECT * FROM posts WHERE id BETWEEN prev_min_id(now() - interval '1 day') AND prev_max_id(now());
--   SELECT prev_compose(now(), 0, 0, 0);

-- The generator (--generator), installed after the functions:
--   prev_next_id() -> bigint   a new ID with datacenter=1, machine=5
-- Its IDs are unique and increasing, and each one's time is the database
-- clock's when it was made. As a column's default:
--   CREATE TABLE posts (id bigint PRIMARY KEY DEFAULT prev_next_id(), body text);
--   ALTER TABLE posts ALTER COLUMN id SET DEFAULT prev_next_id();
--
-- The state is the sequence prev_next_id_state: the last ID's tick * 4096 + its
-- sequence number (a sequence is not rolled back and survives restarts).
-- Callers take turns under a session advisory lock held only within the call
-- (keys: the sequence's OID and 1397641047). Roles that insert need UPDATE on it:
--   GRANT UPDATE ON SEQUENCE prev_next_id_state TO app;
-- The function works in the schema it was installed in (search_path's first).
--
-- - Up to 4096 IDs a tick of 1 ms: one generator's ceiling. When a tick's are used
--   up, the call waits for the next tick; the sequence never wraps.
-- - The clock is read once a call, under the lock. If it reads earlier than the last
--   ID's tick by up to 5 ms, the call waits for it; further back, the call fails,
--   says by how much, and no ID is issued until the clock has caught up. No ID
--   carries a time later than the clock's.
-- - A rolled-back transaction burns its IDs: they are never issued again. The
--   state survives a restart. Never lower it: IDs would repeat.
-- - IDs run out at 2080-07-10T17:30:30.208Z (the generator's last tick).
-- - Several generators in one database: one per prefix, each with node values
--   of its own. The table snowflake_generators lists them and refuses a second
--   with the same layout and node, which would issue the same IDs. One
--   generator's rate is at most the layout's ceiling: more takes more generators,
--   with more node values.

BEGIN;
SET LOCAL client_min_messages = warning;

CREATE TABLE IF NOT EXISTS snowflake_generators (
  prefix text PRIMARY KEY,
  layout text NOT NULL,
  node text NOT NULL,
  node_bits bigint NOT NULL,
  CONSTRAINT one_generator_per_node UNIQUE (layout, node_bits)
);
DO $$
DECLARE
  _other text;
BEGIN
  SELECT layout INTO _other FROM snowflake_generators WHERE prefix = 'prev' AND layout <> 'time:41,datacenter:5,machine:5,sequence:12 epoch 1288834974657 tick 1 ms';
  IF FOUND THEN
    RAISE EXCEPTION 'prefix prev has a generator of another layout, %; its state means nothing in this one. Drop it first: DROP FUNCTION prev_next_id(); DROP SEQUENCE prev_next_id_state; DELETE FROM snowflake_generators WHERE prefix = ''prev'';', _other;
  END IF;
  SELECT prefix INTO _other FROM snowflake_generators
    WHERE layout = 'time:41,datacenter:5,machine:5,sequence:12 epoch 1288834974657 tick 1 ms' AND node_bits = 151552 AND prefix <> 'prev';
  IF FOUND THEN
    RAISE EXCEPTION 'generator % already issues IDs of this layout with datacenter=1, machine=5: two generators with one node issue the same IDs; give this one other node values', _other;
  END IF;
END
$$;
INSERT INTO snowflake_generators (prefix, layout, node, node_bits)
  VALUES ('prev', 'time:41,datacenter:5,machine:5,sequence:12 epoch 1288834974657 tick 1 ms', 'datacenter=1, machine=5', 151552)
  ON CONFLICT (prefix) DO UPDATE SET node = EXCLUDED.node, node_bits = EXCLUDED.node_bits;

-- The time of an ID: the start of its tick.
CREATE OR REPLACE FUNCTION prev_time(id bigint) RETURNS timestamptz
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
CREATE OR REPLACE FUNCTION prev_datacenter(id bigint) RETURNS bigint
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
CREATE OR REPLACE FUNCTION prev_machine(id bigint) RETURNS bigint
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
CREATE OR REPLACE FUNCTION prev_sequence(id bigint) RETURNS bigint
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
CREATE OR REPLACE FUNCTION prev_compose(ts timestamptz, "datacenter" bigint, "machine" bigint, "sequence" bigint) RETURNS bigint
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
CREATE OR REPLACE FUNCTION prev_min_id(ts timestamptz) RETURNS bigint
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
CREATE OR REPLACE FUNCTION prev_max_id(ts timestamptz) RETURNS bigint
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

CREATE SEQUENCE IF NOT EXISTS prev_next_id_state AS bigint MINVALUE 0 START 0 CACHE 1 NO CYCLE;
COMMENT ON SEQUENCE prev_next_id_state IS 'The state of prev_next_id(): the last ID''s tick * 4096 + its sequence number. Never lower it: IDs would repeat.';

CREATE OR REPLACE FUNCTION prev_next_id() RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
DECLARE
  _state bigint;   -- the new ID's tick << 12 | sequence number
  _tick bigint;    -- the new ID's tick
  _us bigint;      -- the database clock, Unix microseconds
  _ms bigint;
  _now bigint;     -- the clock's tick
  _behind bigint;  -- how far the clock is behind the last ID's tick, ms
  _wait_us bigint;
BEGIN
  PERFORM pg_advisory_lock('prev_next_id_state'::regclass::oid::integer, 1397641047);
  BEGIN
    -- Under the lock nobody else moves the state: this is the last ID's
    -- successor, in the same tick or, its sequence used up, the next.
    _state := nextval('prev_next_id_state'::regclass);
    LOOP
      _us := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
      _ms := _us / 1000;
      IF _ms < 1288834974657 THEN
        RAISE EXCEPTION 'prev_next_id: the database clock reads Unix ms %, before the layout''s epoch, 2010-11-04T01:42:54.657Z', _ms
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
      _now := (_ms - 1288834974657);
      IF _now > 2199023255551 THEN
        RAISE EXCEPTION 'prev_next_id: IDs of this layout ran out at 2080-07-10T17:30:30.208Z; the database clock reads Unix ms %', _ms
          USING ERRCODE = 'datetime_field_overflow';
      END IF;
      _tick := _state >> 12;
      EXIT WHEN _now = _tick;
      IF _now > _tick THEN
        _tick := _now;
        _state := _now << 12;
        PERFORM setval('prev_next_id_state'::regclass, _state);
        EXIT;
      END IF;
      -- The clock is behind the new ID's tick: it went back, or the
      -- sequence of its tick is used up.
      _behind := ((_state - 1) >> 12) + 1288834974657 - _ms;
      IF _behind > 5 THEN
        -- Nothing is issued: the state goes back to the last ID.
        PERFORM setval('prev_next_id_state'::regclass, _state - 1);
        RAISE EXCEPTION 'prev_next_id: the database clock went backwards by % ms, more than the 5 ms tolerated; refusing to issue IDs until it catches up (the last ID''s tick began at Unix ms %)',
          _behind, ((_state - 1) >> 12) + 1288834974657
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
      -- pg_sleep wakes in whole milliseconds: sleep to within one of the
      -- new tick, then read the clock until it gets there.
      _wait_us := (_tick + 1288834974657) * 1000 - _us;
      IF _wait_us > 1000 THEN
        PERFORM pg_sleep((_wait_us - 1000) / 1000000.0);
      END IF;
    END LOOP;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM pg_advisory_unlock('prev_next_id_state'::regclass::oid::integer, 1397641047);
    RAISE;
  END;
  PERFORM pg_advisory_unlock('prev_next_id_state'::regclass::oid::integer, 1397641047);
  RETURN (_tick << 22) | 151552 | (_state & 4095);
END
$$;
COMMENT ON FUNCTION prev_next_id() IS 'A new Snowflake ID of layout twitter with datacenter=1, machine=5: unique and increasing. Made by snowflake sql --generator.';

COMMIT;

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

-- The generator (--generator), installed after the functions:
--   sonyflake_next_id() -> bigint   a new ID with machine=5
-- Its IDs are unique and increasing, and each one's time is the database
-- clock's when it was made. As a column's default:
--   CREATE TABLE posts (id bigint PRIMARY KEY DEFAULT sonyflake_next_id(), body text);
--   ALTER TABLE posts ALTER COLUMN id SET DEFAULT sonyflake_next_id();
--
-- The state is the sequence sonyflake_next_id_state: the last ID's tick * 256 + its
-- sequence number (a sequence is not rolled back and survives restarts).
-- The function runs with its owner's rights (SECURITY DEFINER); the state, and
-- the table sonyflake_next_id_lock that callers lock to take turns (for the call only), are
-- its owner's alone. Roles that insert need USAGE on its schema and EXECUTE on it,
-- and nothing on the state (the script takes back what others have there):
--   GRANT EXECUTE ON FUNCTION sonyflake_next_id() TO app;
-- Install it as a role they are not members of, in a schema where no other role
-- can create objects (the script refuses one). The function works in that schema
-- and pg_temp only.
--
-- - Up to 256 IDs a tick of 10 ms: one generator's ceiling. When a tick's are used
--   up, the call waits for the next tick; the sequence never wraps.
-- - The clock is read once a call, under the lock. If it reads earlier than the last
--   ID's tick by up to 5 ms, the call waits for it; further back, the call fails,
--   says by how much, and no ID is issued until the clock has caught up. No ID
--   carries a time later than the clock's.
-- - A rolled-back transaction burns its IDs: they are never issued again. The
--   state survives a restart. Never lower it: IDs would repeat.
-- - IDs run out at 2188-11-16T03:28:58.879Z (the generator's last tick).
-- - One node, one generator: the script refuses a generator whose IDs could
--   equal another's, comparing the bits their node fields fix, whatever their
--   prefixes and layouts.
--   It sees every generator of the database, in every schema.
--   The view snowflake_generators lists them. One generator's rate is at most
--   the layout's ceiling: more takes more generators, with other node values.

BEGIN;
SET LOCAL client_min_messages = warning;

DO $$
DECLARE
  _schema text := pg_catalog.current_schema();
  _timeout text := pg_catalog.current_setting('lock_timeout');
  _creators text;
  _comment text;
  _layout text;
  _other record;
BEGIN
  IF _schema IS NULL THEN
    RAISE EXCEPTION 'no schema to install sonyflake_next_id in: none of search_path''s (%) exists',
      pg_catalog.current_setting('search_path');
  END IF;
  -- One install at a time in a database, so that two cannot miss each other.
  PERFORM pg_catalog.set_config('lock_timeout', '30s', true);
  BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock(1397641047, 1229869908);
  EXCEPTION WHEN lock_not_available THEN
    RAISE EXCEPTION 'another session has held the lock of generator installs in this database for 30s (pg_locks: advisory, classid 1397641047, objid 1229869908); try again when it is done';
  END;
  PERFORM pg_catalog.set_config('lock_timeout', _timeout, true);
  -- The function runs with its owner's rights: a function or operator that
  -- another role put in its schema could be what its calls find.
  IF EXISTS (SELECT FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
              WHERE n.nspname = _schema AND a.grantee = 0 AND a.privilege_type = 'CREATE') THEN
    _creators := 'every role (PUBLIC)';
  ELSE
    SELECT pg_catalog.string_agg(r.rolname::text, ', ' ORDER BY r.rolname) INTO _creators
      FROM pg_catalog.pg_roles r, pg_catalog.pg_namespace n
     WHERE n.nspname = _schema AND r.rolcanlogin AND NOT r.rolsuper
       AND pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE')
       AND NOT pg_catalog.pg_has_role(r.oid, current_user, 'MEMBER');
  END IF;
  IF _creators IS NOT NULL THEN
    RAISE EXCEPTION 'sonyflake_next_id runs with the rights of its owner, %, so no other role may create objects in its schema %, and % can: revoke that (REVOKE CREATE ON SCHEMA % FROM ...), or install it in a schema of its own',
      current_user, _schema, _creators, _schema;
  END IF;
  -- A state of another layout under this prefix.
  _comment := pg_catalog.obj_description(
    pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, 'sonyflake_next_id_state')), 'pg_class');
  IF pg_catalog.strpos(_comment, ' for IDs of layout ') > 0
     AND pg_catalog.strpos(_comment, ' for IDs of layout time:39,sequence:8,machine:16 epoch 1409529600000 tick 10 ms:') = 0 THEN
    RAISE EXCEPTION 'prefix sonyflake has a generator of another layout, %; its state means nothing in this one. Drop it first: DROP FUNCTION sonyflake_next_id(); DROP SEQUENCE sonyflake_next_id_state;', _comment;
  END IF;
  -- The previous version's registry table, which the view replaces.
  IF (SELECT relkind FROM pg_catalog.pg_class WHERE oid =
        pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, 'snowflake_generators'))) = 'r' THEN
    EXECUTE pg_catalog.format('SELECT layout FROM %I.%I WHERE prefix = %L',
      _schema, 'snowflake_generators', 'sonyflake') INTO _layout;
    IF _layout <> 'time:39,sequence:8,machine:16 epoch 1409529600000 tick 10 ms' THEN
      RAISE EXCEPTION 'prefix sonyflake has a generator of another layout, %; its state means nothing in this one. Drop it first: DROP FUNCTION sonyflake_next_id(); DROP SEQUENCE sonyflake_next_id_state;', _layout;
    END IF;
    EXECUTE pg_catalog.format('DROP TABLE %I.%I', _schema, 'snowflake_generators');
  END IF;
  -- Every other generator of the database whose IDs could be this one's:
  -- where the node fields of both fix a bit, they fix it alike.
  FOR _other IN SELECT n.nspname::text AS schema_name, p.proname::text AS function_name,
       r.bits[1]::bigint AS node_bits, r.bits[2]::bigint AS node_mask,
       d.description
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_catalog.pg_description d ON d.objoid = p.oid
    AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0
  CROSS JOIN LATERAL pg_catalog.regexp_match(d.description,
    '; its IDs carry the node bits ([0-9]+) of the mask ([0-9]+)\.$') AS r(bits)
 WHERE pg_catalog.strpos(d.description, 'Made by snowflake sql --generator') > 0 LOOP
    CONTINUE WHEN _other.schema_name = _schema AND _other.function_name = 'sonyflake_next_id';
    IF _other.node_bits IS NULL THEN
      CONTINUE WHEN _other.description <> 'A new Snowflake ID of layout sonyflake with machine=5: unique and increasing. Made by snowflake sql --generator.';
    ELSE
      CONTINUE WHEN ((_other.node_bits # 5) & _other.node_mask & 65535) <> 0;
    END IF;
    RAISE EXCEPTION 'generator %.%() can issue the IDs that this one, of layout sonyflake with machine=5, would: the bits that the node fields of both fix are alike. Give this one other node values. (%)',
      _other.schema_name, _other.function_name, _other.description;
  END LOOP;
END
$$;
CREATE OR REPLACE VIEW snowflake_generators AS
SELECT n.nspname::text AS schema_name, p.proname::text AS function_name,
       r.bits[1]::bigint AS node_bits, r.bits[2]::bigint AS node_mask,
       d.description
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_catalog.pg_description d ON d.objoid = p.oid
    AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0
  CROSS JOIN LATERAL pg_catalog.regexp_match(d.description,
    '; its IDs carry the node bits ([0-9]+) of the mask ([0-9]+)\.$') AS r(bits)
 WHERE pg_catalog.strpos(d.description, 'Made by snowflake sql --generator') > 0;
COMMENT ON VIEW snowflake_generators IS 'The generators of snowflake sql --generator in this database, from their functions'' comments: node_bits and node_mask are NULL for those of the previous version, which did not record them.';

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

CREATE SEQUENCE IF NOT EXISTS sonyflake_next_id_state AS bigint MINVALUE 0 START 0 CACHE 1 NO CYCLE;
COMMENT ON SEQUENCE sonyflake_next_id_state IS 'The state of sonyflake_next_id() for IDs of layout time:39,sequence:8,machine:16 epoch 1409529600000 tick 10 ms: the last ID''s tick * 256 + its sequence number. Never lower it: IDs would repeat.';
CREATE TABLE IF NOT EXISTS sonyflake_next_id_lock ();
COMMENT ON TABLE sonyflake_next_id_lock IS 'Locked by sonyflake_next_id() while it makes an ID, so that callers take turns; it holds nothing.';

CREATE OR REPLACE FUNCTION sonyflake_next_id() RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
  _state bigint;   -- the new ID's tick << 8 | sequence number
  _tick bigint;    -- the new ID's tick
  _us bigint;      -- the database clock, Unix microseconds
  _ms bigint;
  _now bigint;     -- the clock's tick
  _behind bigint;  -- how far the clock is behind the last ID's tick, ms
  _wait_us bigint;
BEGIN
  -- The lock is let go when this block is rolled back: by SF000 below once
  -- the ID is made, or by any error. What nextval and setval did stays.
  BEGIN
    LOCK TABLE sonyflake_next_id_lock IN SHARE ROW EXCLUSIVE MODE;
    -- Under the lock nobody else moves the state: this is the last ID's
    -- successor, in the same tick or, its sequence used up, the next.
    _state := nextval('sonyflake_next_id_state'::regclass);
    LOOP
      _us := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
      _ms := _us / 1000;
      IF _ms < 1409529600000 THEN
        RAISE EXCEPTION 'sonyflake_next_id: the database clock reads Unix ms %, before the layout''s epoch, 2014-09-01T00:00:00.000Z', _ms
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
      _now := ((_ms - 1409529600000) / 10);
      IF _now > 549755813887 THEN
        RAISE EXCEPTION 'sonyflake_next_id: IDs of this layout ran out at 2188-11-16T03:28:58.879Z; the database clock reads Unix ms %', _ms
          USING ERRCODE = 'datetime_field_overflow';
      END IF;
      _tick := _state >> 8;
      EXIT WHEN _now = _tick;
      IF _now > _tick THEN
        _tick := _now;
        _state := _now << 8;
        PERFORM setval('sonyflake_next_id_state'::regclass, _state);
        EXIT;
      END IF;
      -- The clock is behind the new ID's tick: it went back, or the
      -- sequence of its tick is used up.
      _behind := ((_state - 1) >> 8) * 10 + 1409529600000 - _ms;
      IF _behind > 5 THEN
        -- Nothing is issued: the state goes back to the last ID.
        PERFORM setval('sonyflake_next_id_state'::regclass, _state - 1);
        RAISE EXCEPTION 'sonyflake_next_id: the database clock went backwards by % ms, more than the 5 ms tolerated; refusing to issue IDs until it catches up (the last ID''s tick began at Unix ms %)',
          _behind, ((_state - 1) >> 8) * 10 + 1409529600000
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
      -- pg_sleep wakes in whole milliseconds: sleep to within one of the
      -- new tick, then read the clock until it gets there.
      _wait_us := (_tick * 10 + 1409529600000) * 1000 - _us;
      IF _wait_us > 1000 THEN
        PERFORM pg_sleep((_wait_us - 1000) / 1000000.0);
      END IF;
    END LOOP;
    RAISE SQLSTATE 'SF000';
  EXCEPTION WHEN SQLSTATE 'SF000' THEN
    NULL;
  END;
  RETURN (_tick << 24) | 5 | ((_state & 255) << 16);
END
$$;
COMMENT ON FUNCTION sonyflake_next_id() IS 'A new Snowflake ID of layout sonyflake with machine=5: unique and increasing. Made by snowflake sql --generator; its IDs carry the node bits 5 of the mask 65535.';
REVOKE ALL ON FUNCTION sonyflake_next_id() FROM PUBLIC;

DO $$
DECLARE
  _schema text := pg_catalog.current_schema();
  _grantee text;
BEGIN
  EXECUTE pg_catalog.format('ALTER FUNCTION %I.%I() SET search_path = %I, pg_temp',
    _schema, 'sonyflake_next_id', _schema);
  FOR _grantee IN
    SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(r.rolname) END
      FROM pg_catalog.pg_class c
      CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a
      LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
     WHERE c.oid IN (pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, 'sonyflake_next_id_state')),
                     pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, 'sonyflake_next_id_lock')))
       AND a.grantee <> c.relowner
  LOOP
    EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %I.%I FROM %s CASCADE', _schema, 'sonyflake_next_id_state', _grantee);
    EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %I.%I FROM %s CASCADE', _schema, 'sonyflake_next_id_lock', _grantee);
  END LOOP;
END
$$;
COMMIT;

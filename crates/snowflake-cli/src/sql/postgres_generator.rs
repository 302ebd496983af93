//! `<prefix>_next_id()` in PL/pgSQL.
//!
//! The state is a sequence, because `nextval` and `setval` are neither
//! rolled back nor lost in a restart: it holds the last ID's tick and
//! sequence number packed as `tick << seq_bits | sequence`, so that while
//! the clock stays in a tick, `nextval` alone is the next ID's state. Callers
//! take turns under a session-level advisory lock rather than a row lock: a
//! row lock lasts until the caller's transaction ends, an advisory lock is
//! let go as the call returns. The block that holds it lets go on every
//! error, a cancelled statement included, or the generator would stay
//! locked for as long as that session lives.

use super::generator::{NextId, REGISTRY};
use super::plan::{Plan, shifted};

/// The second key of the advisory lock, `SNOW` in ASCII; the first is the
/// state sequence's OID, so that generators in different schemas do not
/// share a lock.
const LOCK_TAG: u32 = u32::from_be_bytes(*b"SNOW");

/// What comes before the read functions (the comment, the transaction's
/// start and the checks) and after them (the state and the function).
pub fn render(plan: &Plan, next: &NextId) -> (String, String) {
    let state_lines = [
        format!(
            "The state is the sequence {}: the last ID's tick * {} + its",
            next.state,
            next.seq_max + 1
        ),
        "sequence number (a sequence is not rolled back and survives restarts).".into(),
        "Callers take turns under a session advisory lock held only within the call".into(),
        format!("(keys: the sequence's OID and {LOCK_TAG}). Roles that insert need UPDATE on it:"),
        format!("  GRANT UPDATE ON SEQUENCE {} TO app;", next.state),
        "The function works in the schema it was installed in (search_path's first).".into(),
    ];
    let defaults = [
        format!(
            "CREATE TABLE posts (id bigint PRIMARY KEY DEFAULT {}(), body text);",
            next.function
        ),
        format!(
            "ALTER TABLE posts ALTER COLUMN id SET DEFAULT {}();",
            next.function
        ),
    ];
    let mut before = next.comment(plan, &state_lines, &defaults);
    // All of it or nothing, with or without psql's ON_ERROR_STOP.
    before.push_str("\nBEGIN;\nSET LOCAL client_min_messages = warning;\n\n");
    before.push_str(&registry(plan, next));
    let mut after = format!(
        "CREATE SEQUENCE IF NOT EXISTS {state} AS bigint MINVALUE 0 START 0 CACHE 1 NO CYCLE;\n\
         COMMENT ON SEQUENCE {state} IS 'The state of {function}(): the last ID''s tick * {per_tick} \
         + its sequence number. Never lower it: IDs would repeat.';\n\n",
        state = next.state,
        function = next.function,
        per_tick = next.seq_max + 1,
    );
    after.push_str(&function(plan, next));
    after.push_str("COMMIT;\n");
    (before, after)
}

/// The registry's row for this generator, after checks that say in words
/// what the constraints would say in keys.
fn registry(plan: &Plan, next: &NextId) -> String {
    let prefix = &plan.prefix;
    let layout = &next.layout_key;
    let node = &next.node_text;
    let node_bits = next.node_bits as i64;
    format!(
        "CREATE TABLE IF NOT EXISTS {REGISTRY} (\n\
         \x20 prefix text PRIMARY KEY,\n\
         \x20 layout text NOT NULL,\n\
         \x20 node text NOT NULL,\n\
         \x20 node_bits bigint NOT NULL,\n\
         \x20 CONSTRAINT one_generator_per_node UNIQUE (layout, node_bits)\n\
         );\n\
         DO $$\n\
         DECLARE\n\
         \x20 _other text;\n\
         BEGIN\n\
         \x20 SELECT layout INTO _other FROM {REGISTRY} WHERE prefix = '{prefix}' AND layout <> '{layout}';\n\
         \x20 IF FOUND THEN\n\
         \x20   RAISE EXCEPTION 'prefix {prefix} has a generator of another layout, %; its state means nothing \
         in this one. Drop it first: DROP FUNCTION {function}(); DROP SEQUENCE {state}; \
         DELETE FROM {REGISTRY} WHERE prefix = ''{prefix}'';', _other;\n\
         \x20 END IF;\n\
         \x20 SELECT prefix INTO _other FROM {REGISTRY}\n\
         \x20   WHERE layout = '{layout}' AND node_bits = {node_bits} AND prefix <> '{prefix}';\n\
         \x20 IF FOUND THEN\n\
         \x20   RAISE EXCEPTION 'generator % already issues IDs of this layout with {node}: \
         two generators with one node issue the same IDs; give this one other node values', _other;\n\
         \x20 END IF;\n\
         END\n\
         $$;\n\
         INSERT INTO {REGISTRY} (prefix, layout, node, node_bits)\n\
         \x20 VALUES ('{prefix}', '{layout}', '{node}', {node_bits})\n\
         \x20 ON CONFLICT (prefix) DO UPDATE SET node = EXCLUDED.node, node_bits = EXCLUDED.node_bits;\n\n",
        function = next.function,
        state = next.state,
    )
}

fn function(plan: &Plan, next: &NextId) -> String {
    let NextId {
        function,
        state,
        seq_bits,
        seq_max,
        seq_shift,
        last_tick,
        tolerance_ms,
        ..
    } = next;
    let epoch = plan.epoch_ms;
    let lock = format!("'{state}'::regclass::oid::integer, {LOCK_TAG}");
    let now = plan.units_of("_ms", "/");
    let mut id = vec![shifted("_tick", plan.time_shift)];
    if next.node_bits != 0 {
        id.push((next.node_bits as i64).to_string());
    }
    id.push(shifted(&format!("(_state & {seq_max})"), *seq_shift));
    let last = snowflake::UnixMillis(next.last_ms(plan));
    let epoch_text = snowflake::UnixMillis(epoch);
    format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
DECLARE
  _state bigint;   -- the new ID's tick << {seq_bits} | sequence number
  _tick bigint;    -- the new ID's tick
  _us bigint;      -- the database clock, Unix microseconds
  _ms bigint;
  _now bigint;     -- the clock's tick
  _behind bigint;  -- how far the clock is behind the last ID's tick, ms
  _wait_us bigint;
BEGIN
  PERFORM pg_advisory_lock({lock});
  BEGIN
    -- Under the lock nobody else moves the state: this is the last ID's
    -- successor, in the same tick or, its sequence used up, the next.
    _state := nextval('{state}'::regclass);
    LOOP
      _us := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
      _ms := _us / 1000;
      IF _ms < {epoch} THEN
        RAISE EXCEPTION '{function}: the database clock reads Unix ms %, before the layout''s epoch, {epoch_text}', _ms
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
      _now := {now};
      IF _now > {last_tick} THEN
        RAISE EXCEPTION '{function}: IDs of this layout ran out at {last}; the database clock reads Unix ms %', _ms
          USING ERRCODE = 'datetime_field_overflow';
      END IF;
      _tick := _state >> {seq_bits};
      EXIT WHEN _now = _tick;
      IF _now > _tick THEN
        _tick := _now;
        _state := _now << {seq_bits};
        PERFORM setval('{state}'::regclass, _state);
        EXIT;
      END IF;
      -- The clock is behind the new ID's tick: it went back, or the
      -- sequence of its tick is used up.
      _behind := {last_start} - _ms;
      IF _behind > {tolerance_ms} THEN
        -- Nothing is issued: the state goes back to the last ID.
        PERFORM setval('{state}'::regclass, _state - 1);
        RAISE EXCEPTION '{function}: the database clock went backwards by % ms, more than the {tolerance_ms} ms tolerated; refusing to issue IDs until it catches up (the last ID''s tick began at Unix ms %)',
          _behind, {last_start}
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
      -- pg_sleep wakes in whole milliseconds: sleep to within one of the
      -- new tick, then read the clock until it gets there.
      _wait_us := ({tick_start}) * 1000 - _us;
      IF _wait_us > 1000 THEN
        PERFORM pg_sleep((_wait_us - 1000) / 1000000.0);
      END IF;
    END LOOP;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM pg_advisory_unlock({lock});
    RAISE;
  END;
  PERFORM pg_advisory_unlock({lock});
  RETURN {id};
END
$$;
COMMENT ON FUNCTION {function}() IS 'A new Snowflake ID of layout {layout} with {node}: unique and increasing. Made by snowflake sql --generator.';

",
        last_start = plan.unix_ms_of(&format!("((_state - 1) >> {seq_bits})")),
        tick_start = plan.unix_ms_of("_tick"),
        id = id.join(" | "),
        layout = plan.layout,
        node = next.node_text,
    )
}

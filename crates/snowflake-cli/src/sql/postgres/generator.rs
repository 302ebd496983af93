//! `<prefix>_next_id()` in PL/pgSQL, and its install.
//!
//! The state is a sequence, because `nextval` and `setval` are neither
//! rolled back nor lost in a restart: it holds the last ID's tick and
//! sequence number packed as `tick << seq_bits | sequence`, so that while
//! the clock stays in a tick, `nextval` alone is the next ID's state.
//!
//! # Whose the state is
//!
//! The function runs with its owner's rights (`SECURITY DEFINER`), and no
//! other role has any right on the state: a caller that could `setval` it
//! could rewind it (the same IDs again) or set it years ahead (no IDs until
//! then). Its search_path is the schema it was installed in and `pg_temp`
//! last, written out at install time: `"$user"`, resolved per caller, would
//! let a caller's own schema hold a look-alike state. A role that could
//! create objects in that schema could put there a function or operator
//! that the body's calls would pick, run with the owner's rights: the
//! install refuses such a schema.
//!
//! # Taking turns
//!
//! Callers take turns under a table lock on `<prefix>_next_id_lock`, which
//! only its owner can take (an advisory lock, which needs no right, any role
//! could take and hold). The lock is taken inside a block with an exception
//! handler, whose subtransaction a private error rolls back once the ID is
//! made: that lets go of the lock as the call returns, not at the caller's
//! commit (which would make whole transactions take turns, and deadlock
//! callers that take two IDs in two orders), while what `nextval` and
//! `setval` did stays, and the block's variables keep their values. Any
//! other error, a cancelled statement included, rolls the block back too.
//! The mode, SHARE ROW EXCLUSIVE, conflicts with itself and not with the
//! ACCESS SHARE and ROW SHARE locks that any role takes for an instant when
//! it names the table in a query that its rights then refuse.

use super::Postgres;
use crate::sql::database::{GeneratorNotes, GeneratorSql};
use crate::sql::generator::{
    BITS_WORDS, MADE_BY, MASK_WORDS, REGISTRY, STATE_LAYOUT_WORDS, SqlGenerator,
};
use crate::sql::layout::{SqlLayout, quoted};

/// The SQLSTATE of the error that ends the locked block once the ID is
/// made; no statement in the block raises it otherwise.
const LET_GO: &str = "SF000";

/// The keys of the transaction-level advisory lock that installs of
/// generators in a database take, one at a time (`SNOW`, `INST` in ASCII).
/// Anyone may take it, which at worst holds up an install: the install
/// waits this long and then says so.
const INSTALL_LOCK: (i32, i32) = (i32::from_be_bytes(*b"SNOW"), i32::from_be_bytes(*b"INST"));
const INSTALL_WAIT: &str = "30s";

impl GeneratorSql for Postgres {
    fn notes(&self, generator: &SqlGenerator) -> GeneratorNotes {
        let SqlGenerator {
            function,
            state,
            lock,
            seq_max,
            ..
        } = generator;
        let state_lines = vec![
            format!(
                "The state is the sequence {state}: the last ID's tick * {} + its",
                seq_max + 1
            ),
            "sequence number (a sequence is not rolled back and survives restarts).".into(),
            "The function runs with its owner's rights (SECURITY DEFINER); the state, and".into(),
            format!("the table {lock} that callers lock to take turns (for the call only), are"),
            "its owner's alone. Roles that insert need USAGE on its schema and EXECUTE on it,"
                .into(),
            "and nothing on the state (the script takes back what others have there):".into(),
            format!("  GRANT EXECUTE ON FUNCTION {function}() TO app;"),
            "Install it as a role they are not members of, in a schema where no other role".into(),
            "can create objects (the script refuses one). The function works in that schema".into(),
            "and pg_temp only.".into(),
        ];
        let default_lines = vec![
            format!("CREATE TABLE posts (id bigint PRIMARY KEY DEFAULT {function}(), body text);"),
            format!("ALTER TABLE posts ALTER COLUMN id SET DEFAULT {function}();"),
        ];
        GeneratorNotes {
            state: state_lines,
            default: default_lines,
            seen: &["  It sees every generator of the database, in every schema."],
        }
    }

    /// All of it or nothing, with or without psql's ON_ERROR_STOP.
    fn install_start(&self) -> &'static str {
        "\nBEGIN;\nSET LOCAL client_min_messages = warning;\n\n"
    }

    /// The checks, in words, before anything is created; a refusal rolls
    /// the whole script back.
    fn install_check(&self, layout: &SqlLayout, generator: &SqlGenerator) -> String {
        format!(
            "DO $$
DECLARE
  _schema text := pg_catalog.current_schema();
  _timeout text := pg_catalog.current_setting('lock_timeout');
  _creators text;
  _comment text;
  _layout text;
  _other record;
BEGIN
{}{}{}{}{}{}END
$$;
",
            schema_exists(generator),
            install_lock(),
            no_other_creators(generator),
            state_of_this_layout(layout, generator),
            previous_registry(layout, generator),
            no_generator_meets(layout, generator),
        )
    }

    fn registry_view(&self) -> String {
        format!(
            "CREATE OR REPLACE VIEW {REGISTRY} AS\n{};\n\
             COMMENT ON VIEW {REGISTRY} IS 'The generators of snowflake sql --generator in this \
             database, from their functions'' comments: node_bits and node_mask are NULL for \
             those of the previous version, which did not record them.';\n\n",
            registry_select()
        )
    }

    fn state(&self, generator: &SqlGenerator) -> String {
        let (state, lock) = (&generator.state, &generator.lock);
        let state_comment = quoted(&generator.state_comment(&format!(
            "the last ID's tick * {} + its sequence number",
            generator.seq_max + 1
        )));
        format!(
            "CREATE SEQUENCE IF NOT EXISTS {state} AS bigint MINVALUE 0 START 0 CACHE 1 NO CYCLE;\n\
             COMMENT ON SEQUENCE {state} IS '{state_comment}';\n\
             CREATE TABLE IF NOT EXISTS {lock} ();\n\
             COMMENT ON TABLE {lock} IS 'Locked by {}() while it makes an ID, so that \
             callers take turns; it holds nothing.';\n\n",
            generator.function,
        )
    }

    fn next_id(&self, layout: &SqlLayout, generator: &SqlGenerator) -> String {
        let SqlGenerator {
            function,
            state,
            lock,
            ..
        } = generator;
        let id = generator.id(layout, &format!("(_state & {})", generator.seq_max));
        format!(
            "CREATE OR REPLACE FUNCTION {function}() RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
{declare}BEGIN
  -- The lock is let go when this block is rolled back: by {LET_GO} below once
  -- the ID is made, or by any error. What nextval and setval did stays.
  BEGIN
    LOCK TABLE {lock} IN SHARE ROW EXCLUSIVE MODE;
    -- Under the lock nobody else moves the state: this is the last ID's
    -- successor, in the same tick or, its sequence used up, the next.
    _state := nextval('{state}'::regclass);
    LOOP
{clock}{advance}{too_far_back}{wait}    END LOOP;
    RAISE SQLSTATE '{LET_GO}';
  EXCEPTION WHEN SQLSTATE '{LET_GO}' THEN
    NULL;
  END;
  RETURN {id};
END
$$;
COMMENT ON FUNCTION {function}() IS '{comment}';
REVOKE ALL ON FUNCTION {function}() FROM PUBLIC;

",
            declare = declarations(generator),
            clock = read_the_clock(layout, generator),
            advance = advance(generator),
            too_far_back = too_far_back(layout, generator),
            wait = wait_for_the_tick(layout),
            comment = quoted(&generator.function_comment(layout)),
        )
    }

    fn install_end(&self, generator: &SqlGenerator) -> String {
        pin_search_path_and_revoke(generator) + "COMMIT;\n"
    }
}

/// Every generator of the database, from the comments of functions: its
/// schema and function, the bits its node fields fix and their mask (NULL
/// for a generator of the previous version), and the comment.
fn registry_select() -> String {
    format!(
        "SELECT n.nspname::text AS schema_name, p.proname::text AS function_name,\n\
         \x20      r.bits[1]::bigint AS node_bits, r.bits[2]::bigint AS node_mask,\n\
         \x20      d.description\n\
         \x20 FROM pg_catalog.pg_proc p\n\
         \x20 JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace\n\
         \x20 JOIN pg_catalog.pg_description d ON d.objoid = p.oid\n\
         \x20   AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0\n\
         \x20 CROSS JOIN LATERAL pg_catalog.regexp_match(d.description,\n\
         \x20   '{BITS_WORDS}([0-9]+){MASK_WORDS}([0-9]+)\\.$') AS r(bits)\n\
         \x20WHERE pg_catalog.strpos(d.description, '{MADE_BY}') > 0"
    )
}

/// The install's first check: there is a schema to install in.
fn schema_exists(generator: &SqlGenerator) -> String {
    let function = &generator.function;
    format!(
        "  IF _schema IS NULL THEN
    RAISE EXCEPTION 'no schema to install {function} in: none of search_path''s (%) exists',
      pg_catalog.current_setting('search_path');
  END IF;
"
    )
}

/// One install at a time, under an advisory lock held to the end of the
/// install's transaction.
fn install_lock() -> String {
    let (k1, k2) = INSTALL_LOCK;
    format!(
        "  -- One install at a time in a database, so that two cannot miss each other.
  PERFORM pg_catalog.set_config('lock_timeout', '{INSTALL_WAIT}', true);
  BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock({k1}, {k2});
  EXCEPTION WHEN lock_not_available THEN
    RAISE EXCEPTION 'another session has held the lock of generator installs in this database for {INSTALL_WAIT} (pg_locks: advisory, classid {k1}, objid {k2}); try again when it is done';
  END;
  PERFORM pg_catalog.set_config('lock_timeout', _timeout, true);
"
    )
}

/// No role but the owner (and its members, and superusers) may create
/// objects in the schema the function runs in.
fn no_other_creators(generator: &SqlGenerator) -> String {
    let function = &generator.function;
    format!(
        "  -- The function runs with its owner's rights: a function or operator that
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
    RAISE EXCEPTION '{function} runs with the rights of its owner, %, so no other role may create objects in its schema %, and % can: revoke that (REVOKE CREATE ON SCHEMA % FROM ...), or install it in a schema of its own',
      current_user, _schema, _creators, _schema;
  END IF;
"
    )
}

/// The refusal of a prefix whose state is of another layout, `%`.
fn another_layout(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function, state, ..
    } = generator;
    format!(
        "prefix {} has a generator of another layout, %; its state means nothing in \
         this one. Drop it first: DROP FUNCTION {function}(); DROP SEQUENCE {state};",
        layout.prefix
    )
}

/// The state under this prefix, if there is one, is of this layout.
fn state_of_this_layout(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        state, layout_key, ..
    } = generator;
    format!(
        "  -- A state of another layout under this prefix.
  _comment := pg_catalog.obj_description(
    pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, '{state}')), 'pg_class');
  IF pg_catalog.strpos(_comment, '{STATE_LAYOUT_WORDS}') > 0
     AND pg_catalog.strpos(_comment, '{STATE_LAYOUT_WORDS}{layout_key}:') = 0 THEN
    RAISE EXCEPTION '{}', _comment;
  END IF;
",
        another_layout(layout, generator)
    )
}

/// The previous version's registry table: its row of this prefix is of
/// this layout, and the table goes.
fn previous_registry(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let (prefix, layout_key) = (&layout.prefix, &generator.layout_key);
    format!(
        "  -- The previous version's registry table, which the view replaces.
  IF (SELECT relkind FROM pg_catalog.pg_class WHERE oid =
        pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, '{REGISTRY}'))) = 'r' THEN
    EXECUTE pg_catalog.format('SELECT layout FROM %I.%I WHERE prefix = %L',
      _schema, '{REGISTRY}', '{prefix}') INTO _layout;
    IF _layout <> '{layout_key}' THEN
      RAISE EXCEPTION '{}', _layout;
    END IF;
    EXECUTE pg_catalog.format('DROP TABLE %I.%I', _schema, '{REGISTRY}');
  END IF;
",
        another_layout(layout, generator)
    )
}

/// No other generator of the database can issue this one's IDs.
fn no_generator_meets(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        node_text,
        ..
    } = generator;
    let name = &layout.name;
    // What the previous version wrote in the comment of a generator of this
    // layout and node: it recorded no bits, but that one issues these IDs.
    let previous = format!(
        "A new Snowflake ID of layout {name} with {node_text}: unique and increasing. {MADE_BY}."
    );
    format!(
        "  -- Every other generator of the database whose IDs could be this one's:
  -- where the node fields of both fix a bit, they fix it alike.
  FOR _other IN {select} LOOP
    CONTINUE WHEN _other.schema_name = _schema AND _other.function_name = '{function}';
    IF _other.node_bits IS NULL THEN
      CONTINUE WHEN _other.description <> '{previous}';
    ELSE
      CONTINUE WHEN ((_other.node_bits # {node_bits}) & _other.node_mask & {node_mask}) <> 0;
    END IF;
    RAISE EXCEPTION 'generator %.%() can issue the IDs that this one, of layout {name} with {node_text}, would: the bits that the node fields of both fix are alike. Give this one other node values. (%)',
      _other.schema_name, _other.function_name, _other.description;
  END LOOP;
",
        select = registry_select(),
        node_bits = generator.node_bits,
        node_mask = generator.node_mask,
    )
}

/// The function's variables.
fn declarations(generator: &SqlGenerator) -> String {
    format!(
        "DECLARE
  _state bigint;   -- the new ID's tick << {} | sequence number
  _tick bigint;    -- the new ID's tick
  _us bigint;      -- the database clock, Unix microseconds
  _ms bigint;
  _now bigint;     -- the clock's tick
  _behind bigint;  -- how far the clock is behind the last ID's tick, ms
  _wait_us bigint;
",
        generator.seq_bits
    )
}

/// The clock, read once a turn, in the layout's times.
fn read_the_clock(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        last_tick,
        ..
    } = generator;
    let epoch = layout.epoch_ms;
    format!(
        "      _us := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
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
",
        epoch_text = snowflake::UnixMillis(epoch),
        now = layout.units_of("_ms", "/"),
        last = snowflake::UnixMillis(generator.last_ms(layout)),
    )
}

/// The new ID is `nextval`'s in the clock's tick, or the first of a later
/// tick the clock has reached.
fn advance(generator: &SqlGenerator) -> String {
    let SqlGenerator {
        state, seq_bits, ..
    } = generator;
    format!(
        "      _tick := _state >> {seq_bits};
      EXIT WHEN _now = _tick;
      IF _now > _tick THEN
        _tick := _now;
        _state := _now << {seq_bits};
        PERFORM setval('{state}'::regclass, _state);
        EXIT;
      END IF;
"
    )
}

/// A clock further back than the tolerance: nothing is issued.
fn too_far_back(layout: &SqlLayout, generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        state,
        tolerance_ms,
        ..
    } = generator;
    let last_start = layout.unix_ms_of(&format!("((_state - 1) >> {})", generator.seq_bits));
    format!(
        "      -- The clock is behind the new ID's tick: it went back, or the
      -- sequence of its tick is used up.
      _behind := {last_start} - _ms;
      IF _behind > {tolerance_ms} THEN
        -- Nothing is issued: the state goes back to the last ID.
        PERFORM setval('{state}'::regclass, _state - 1);
        RAISE EXCEPTION '{function}: the database clock went backwards by % ms, more than the {tolerance_ms} ms tolerated; refusing to issue IDs until it catches up (the last ID''s tick began at Unix ms %)',
          _behind, {last_start}
          USING ERRCODE = 'object_not_in_prerequisite_state';
      END IF;
"
    )
}

/// Waits for the clock to reach the new ID's tick.
fn wait_for_the_tick(layout: &SqlLayout) -> String {
    format!(
        "      -- pg_sleep wakes in whole milliseconds: sleep to within one of the
      -- new tick, then read the clock until it gets there.
      _wait_us := ({}) * 1000 - _us;
      IF _wait_us > 1000 THEN
        PERFORM pg_sleep((_wait_us - 1000) / 1000000.0);
      END IF;
",
        layout.unix_ms_of("_tick")
    )
}

/// The function's search_path, written out, and the state and the lock
/// taken back from every role but their owner: what an install of the
/// previous version told to grant, or default privileges gave.
fn pin_search_path_and_revoke(generator: &SqlGenerator) -> String {
    let SqlGenerator {
        function,
        state,
        lock,
        ..
    } = generator;
    format!(
        "DO $$
DECLARE
  _schema text := pg_catalog.current_schema();
  _grantee text;
BEGIN
  EXECUTE pg_catalog.format('ALTER FUNCTION %I.%I() SET search_path = %I, pg_temp',
    _schema, '{function}', _schema);
  FOR _grantee IN
    SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(r.rolname) END
      FROM pg_catalog.pg_class c
      CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a
      LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
     WHERE c.oid IN (pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, '{state}')),
                     pg_catalog.to_regclass(pg_catalog.format('%I.%I', _schema, '{lock}')))
       AND a.grantee <> c.relowner
  LOOP
    EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %I.%I FROM %s CASCADE', _schema, '{state}', _grantee);
    EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %I.%I FROM %s CASCADE', _schema, '{lock}', _grantee);
  END LOOP;
END
$$;
"
    )
}

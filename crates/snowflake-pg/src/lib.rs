//! The snowflake core inside PostgreSQL: `CREATE EXTENSION snowflake`.
//!
//! `snowflake.next_id()` is the core's generator, the same compare-and-swap
//! step as `snowflake::Generator::next_id`, over a state word in shared
//! memory; the read functions (`time`, `field`, `decode`, `compose`,
//! `min_id`, `max_id`, `to_text`, `from_text`) are the core's functions.
//! Nothing here decides an ID: this crate places the core's state, keeps
//! its high-water mark in WAL, and turns errors into SQL errors. How to
//! install and use it is in `docs/postgres-extension.md`.
//!
//! # Design
//!
//! PostgreSQL runs each connection in a process of its own, so a generator
//! in one backend's memory would be one generator per connection, each
//! handing out the IDs of the others. The invariants below make the server
//! one generator, and say why each holds.
//!
//! 1. **One state per server, moved only by the core's compare-and-swap.**
//!    The state word (`snowflake::SharedState`) lives in shared memory that
//!    the postmaster sets up before any backend exists (the library is in
//!    `shared_preload_libraries`; without it `next_id()` refuses). Every
//!    backend builds its own `Generator` from the settings, which are
//!    `PGC_POSTMASTER` and so the same in every backend of a server's
//!    life, and issues with `Generator::next_id_on` over the shared word:
//!    one CAS, no lock, so callers never take turns. The postmaster builds
//!    no generator, so none is copied into a forked backend.
//!
//! 2. **No ID is returned whose time a durable mark does not cover.** The
//!    mark is the value of the sequence `snowflake_internal.mark` (Unix
//!    milliseconds) in the database `snowflake.database` names; a mark
//!    that is not `LOGGED` (`ALTER SEQUENCE ... SET UNLOGGED`) would not
//!    survive a crash, so `next_id()` refuses to load or write one. The core
//!    asks the mark to cover a time unit before it publishes the unit's
//!    first ID ([`mark`]); the shared `mark_ms` says what is durable, and
//!    is raised only after `setval` and `XLogFlush` have returned. The mark
//!    is written a reserve window (1 s) ahead and topped up when half of it
//!    is left, so a write happens about twice a second while IDs are
//!    issued, never per ID.
//!    - *Who writes:* whichever backend wins the writer word (a CAS from 0
//!      to its pid). A backend whose unit is still covered never waits for
//!      a top-up; one whose unit is not yet covered waits until the writer
//!      has published, or takes the word itself ([`shared`]).
//!    - *Two at the window's end:* one writes; the other waits for one WAL
//!      flush, sees the new mark, and both issue.
//!    - *A writer that fails:* an SQL error unwinds through a guard that
//!      frees the word; a backend that exits frees it in its exit callback;
//!      a backend killed outright makes the postmaster reset shared memory
//!      and recover from WAL, where invariant 3 takes over.
//!    - *Why a sequence:* `setval` is not transactional: its WAL record is
//!      replayed whether or not its transaction commits, so an ID returned
//!      by a `SELECT` whose transaction rolls back or never ends is
//!      covered; the flush makes it durable before the ID leaves. The
//!      sequence is in WAL, so it streams to standbys and is in base
//!      backups; it is an extension configuration object, so `pg_dump`
//!      keeps it.
//!
//! 3. **After any start, the state resumes above every ID handed out
//!    before.** The first `next_id()` after the server starts (after a
//!    clean stop, a crash, `kill -9` of the postmaster, a restore, or a
//!    promotion) takes the writer word, reads the mark `M` that recovery
//!    replayed, and resumes the state above `max(M, now + reserve)` with
//!    the core's `GeneratorBuilder::resume`: it waits until the clock has
//!    passed that time (at most the tolerance plus the reserve window
//!    away), and refuses, naming the amount, when the clock is further
//!    behind `M` than that.
//!    - *Crash, kill -9:* by invariant 2, `M` covers every ID returned,
//!      committed or not, whatever the clock did across the crash.
//!    - *Restore to an earlier point:* `M` covers what was issued before
//!      the restore point; what the lost timeline issued after it carried
//!      times no later than that server's clock (the generator never runs
//!      ahead of its clock: no lead), which `now + reserve` passes unless
//!      the clock was set back across the restore.
//!    - *A promoted standby:* the mark's WAL reaches the standby as the
//!      primary streams it, asynchronously, so the last mark may be lost
//!      with the primary. The promoted node's `M` covers every ID issued
//!      under a mark that reached it; every other ID the old primary issued
//!      carried a time no later than the old primary's clock when it
//!      died, before the promotion. So the promoted node issues above every
//!      ID of the old primary if the two clocks agree within the reserve
//!      window (1 s), which NTP keeps by orders of magnitude. A standby
//!      refuses `next_id()` while it is one.
//!    - *Other settings:* the mark is Unix milliseconds, but IDs above it
//!      under another layout can sort below those issued before, and
//!      under another node are another node's; so the resume refuses
//!      unless the layout and node are those recorded with the mark, or
//!      the owner adopted them ([`record`]).
//!
//! 4. **A clock set back is the core's business.** Within the tolerance
//!    (5 ms) the call waits; beyond it, it fails with the size of the step,
//!    and succeeds again once the clock has caught up.
//!
//! 5. **No role moves, rewinds or freezes the state in SQL.** The state
//!    word, `mark_ms` and the writer word are in shared memory, which no
//!    SQL reaches; `next_id()` only issues. The sequence grants nothing to
//!    `PUBLIC`, nor does its schema, `snowflake_internal`: a role that
//!    could name the mark could queue a lock request on it (`CREATE RULE`
//!    asks before ownership is checked), and every mark write behind that.
//!    `next_id()` writes it as the bootstrap superuser for the length of
//!    one `setval`, so `EXECUTE` on `next_id()` gives no way to set, read
//!    or lock it. It refuses in a parallel operation, where the mark
//!    cannot be written. The settings are `PGC_POSTMASTER`: only who can
//!    edit the server's configuration and restart it changes them. A
//!    superuser can do all of that and more (replace the library); the
//!    promise is for every other role.

mod admit;
mod backoff;
mod pairs;
mod read;
mod report;
mod settings;
mod shared;

mod issue;
mod mark;
mod record;

pgrx::pg_module_magic!();

pgrx::extension_sql!(
    r#"
-- The read functions take their layout, field and text arguments as UTF-8,
-- which text in a database of another encoding is not.
DO $$
BEGIN
    IF (SELECT nspowner FROM pg_catalog.pg_namespace WHERE nspname = 'snowflake')
        <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'schema snowflake belongs to another role'
            USING HINT = 'drop it, or install as its owner: its owner could drop the generator''s objects';
    END IF;
    IF pg_catalog.getdatabaseencoding() <> 'UTF8' THEN
        RAISE EXCEPTION 'snowflake needs a database whose encoding is UTF8, and this one''s is %',
            pg_catalog.getdatabaseencoding()
            USING HINT = 'create the extension in a database created with ENCODING ''UTF8'': its functions take their text arguments as UTF-8';
    END IF;
END
$$;
-- The high-water mark, in Unix milliseconds: written by next_id() alone,
-- before any ID it covers is returned. A sequence, because setval is logged
-- to WAL and kept whether or not the transaction that made it commits. In a
-- schema of its own that grants nothing to PUBLIC: a role that may name the
-- mark may ask for a lock on it (CREATE RULE asks for the strongest before
-- PostgreSQL checks who owns it), and every mark write would queue behind
-- that request while any transaction holds a lock on the mark.
CREATE SCHEMA snowflake_internal;
REVOKE ALL ON SCHEMA snowflake_internal FROM PUBLIC;
CREATE SEQUENCE snowflake_internal.mark AS bigint MINVALUE 1 START 1 NO CYCLE;
REVOKE ALL ON SEQUENCE snowflake_internal.mark FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('snowflake_internal.mark', '');
-- What the mark is written under (record.rs): a fingerprint of the layout
-- and the node, kept as the mark is, and their words for messages.
CREATE SEQUENCE snowflake_internal.settings AS bigint
    MINVALUE -9223372036854775808 START 0 NO CYCLE;
REVOKE ALL ON SEQUENCE snowflake_internal.settings FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('snowflake_internal.settings', '');
CREATE TABLE snowflake_internal.settings_text (
    fingerprint bigint PRIMARY KEY,
    settings text NOT NULL
);
REVOKE ALL ON TABLE snowflake_internal.settings_text FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('snowflake_internal.settings_text', '');
"#,
    name = "mark",
    bootstrap
);

pgrx::extension_sql!(
    r#"
-- Who may issue is the owner's to grant; adopting other settings is the
-- owner's alone; the read functions are pure.
REVOKE EXECUTE ON FUNCTION next_id() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION adopt_settings() FROM PUBLIC;
GRANT USAGE ON SCHEMA snowflake TO PUBLIC;
"#,
    name = "privileges",
    finalize
);

/// Called when the library is loaded: by the postmaster, from
/// `shared_preload_libraries`, before any backend exists; or by a backend.
#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // Loaded later, by a backend, it may define no PGC_POSTMASTER setting
    // and ask for no shared memory: the read functions need neither, and
    // next_id() says how to preload it.
    if shared::preloading() {
        settings::define();
        shared::request();
    }
}

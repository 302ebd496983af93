//! The high-water mark in WAL: the sequence `snowflake_internal.mark`, written with
//! `setval` and flushed before the shared `mark_ms` says it is durable
//! (see the crate's Design, 2).

use std::ffi::CStr;

use pgrx::{IntoDatum, pg_sys};
use snowflake::{Error, Generator, SharedMark};

use crate::shared::{Shared, Writing};

/// How far ahead of use the mark is written, in milliseconds; it is topped
/// up when half of it is left.
pub(crate) const RESERVE_MS: i64 = Generator::DEFAULT_RESERVE_MS as i64;

/// The mark of the server's shared state, as the core asks for it.
#[derive(Debug)]
pub(crate) struct WalMark(pub(crate) &'static Shared);

impl SharedMark for WalMark {
    fn cover(&self, mark_ms: i64) -> Result<(), Error> {
        let shared = self.0;
        let durable = shared.mark_ms.load(std::sync::atomic::Ordering::Acquire);
        if mark_ms <= durable {
            // Covered: top up early, by whoever finds the word free, so
            // that callers rarely wait for the disk. A backend that finds it
            // taken goes on: its unit is covered.
            if mark_ms + RESERVE_MS / 2 > durable
                && let Some(writing) = shared.try_write()
                && mark_ms + RESERVE_MS / 2 > durable_ms(shared)
            {
                write(shared, &writing, mark_ms + RESERVE_MS)?;
            }
            return Ok(());
        }
        if let Some(writing) = shared.write_or_wait(|s| mark_ms <= durable_ms(s))
            && mark_ms > durable_ms(shared)
        {
            write(shared, &writing, mark_ms + RESERVE_MS)?;
        }
        Ok(())
    }
}

fn durable_ms(shared: &Shared) -> i64 {
    shared.mark_ms.load(std::sync::atomic::Ordering::Acquire)
}

/// Makes `mark_ms` durable, then publishes it. Only the writer calls it.
fn write(shared: &Shared, _writing: &Writing<'_>, mark_ms: i64) -> Result<(), Error> {
    let relid = sequence()?;
    as_bootstrap_superuser(|| {
        // SAFETY: setval(regclass, bigint) called as the fmgr function it is,
        // with two non-null arguments of its types, inside the caller's
        // transaction; it raises an SQL error rather than return badly.
        unsafe {
            pgrx::direct_function_call::<i64>(
                pg_sys::setval_oid,
                &[relid.into_datum(), mark_ms.into_datum()],
            )
        }
    });
    // SAFETY: XactLastRecEnd is this backend's end of its last WAL record,
    // here setval's; XLogFlush returns once WAL up to it is on disk.
    unsafe { pg_sys::XLogFlush(pg_sys::XactLastRecEnd) };
    shared
        .mark_ms
        .fetch_max(mark_ms, std::sync::atomic::Ordering::AcqRel);
    Ok(())
}

/// The mark recovery left in the sequence: `None` before the first write.
pub(crate) fn read() -> Result<Option<i64>, Error> {
    let relid = sequence()?;
    Ok(as_bootstrap_superuser(|| {
        // SAFETY: pg_sequence_last_value(regclass) called as the fmgr
        // function it is, with one non-null argument of its type; it
        // returns NULL for a sequence never set.
        unsafe {
            pgrx::direct_function_call::<i64>(pg_sys::pg_sequence_last_value, &[relid.into_datum()])
        }
    }))
}

/// The schema and name of the mark's sequence.
const SCHEMA: &CStr = c"snowflake_internal";
const NAME: &CStr = c"mark";

/// `snowflake_internal.mark` in this database, looked up at every use (a
/// mark write is rare), so that a re-created extension is found; refused
/// unless it is `LOGGED`, as the mark must survive a crash.
fn sequence() -> Result<pg_sys::Oid, Error> {
    let missing = || {
        Error::store_failure(
            "the sequence snowflake_internal.mark, where the generator keeps its high-water \
             mark, is missing: is the extension installed in this database?",
        )
    };
    // SAFETY: catalog lookups by name with NUL-terminated strings, in a
    // transaction; `true`/InvalidOid report a missing object.
    let relid = unsafe {
        let namespace = pg_sys::get_namespace_oid(SCHEMA.as_ptr(), true);
        if namespace == pg_sys::InvalidOid {
            return Err(missing());
        }
        pg_sys::get_relname_relid(NAME.as_ptr(), namespace)
    };
    if relid == pg_sys::InvalidOid {
        return Err(missing());
    }
    // SAFETY: a syscache lookup of a relation that exists, in a transaction.
    let persistence = unsafe { pg_sys::get_rel_persistence(relid) } as u8;
    if persistence != pg_sys::RELPERSISTENCE_PERMANENT {
        // An unlogged mark is reset by crash recovery: IDs after a crash
        // could fall below those handed out before it.
        return Err(Error::store_failure(
            "the sequence snowflake_internal.mark, where the generator keeps its high-water \
             mark, is not LOGGED, so the mark would not survive a crash: run ALTER SEQUENCE \
             snowflake_internal.mark SET LOGGED",
        ));
    }
    Ok(relid)
}

/// Runs `f` as the bootstrap superuser, as a `SECURITY DEFINER` function
/// of its would: the sequence grants nothing to anyone else, so that no
/// role that may call `next_id()` can set, read or lock it.
fn as_bootstrap_superuser<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(pg_sys::Oid, i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: restores the user and context saved below, in the same
            // backend and transaction (an error also restores them as the
            // transaction aborts).
            unsafe { pg_sys::SetUserIdAndSecContext(self.0, self.1) };
        }
    }
    let (mut user, mut context) = (pg_sys::InvalidOid, 0);
    // SAFETY: reads this backend's current user and security context into
    // two locals, then switches to the bootstrap superuser for `f` with the
    // restrictions a SECURITY DEFINER function runs under.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
        pg_sys::SetUserIdAndSecContext(
            pg_sys::Oid::from(pg_sys::BOOTSTRAP_SUPERUSERID),
            context
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
    }
    let _restore = Restore(user, context);
    f()
}

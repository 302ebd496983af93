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
    set_durably(Sequence::Mark, mark_ms)?;
    shared
        .mark_ms
        .fetch_max(mark_ms, std::sync::atomic::Ordering::AcqRel);
    Ok(())
}

/// The mark recovery left in the sequence: `None` before the first write.
pub(crate) fn read() -> Result<Option<i64>, Error> {
    value(Sequence::Mark)
}

/// The sequences of the schema `snowflake_internal`: values written with
/// `setval`, which is kept whatever becomes of the transaction that
/// called it, and flushed before anything relies on them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sequence {
    /// The high-water mark, in Unix milliseconds.
    Mark,
    /// The fingerprint of the settings the mark is written under
    /// ([`crate::record`]).
    Settings,
}

impl Sequence {
    fn name(self) -> &'static CStr {
        match self {
            Sequence::Mark => c"mark",
            Sequence::Settings => c"settings",
        }
    }

    fn keeps(self) -> &'static str {
        match self {
            Sequence::Mark => "the generator's high-water mark",
            Sequence::Settings => "the settings the generator's high-water mark is written under",
        }
    }
}

/// A sequence's value: `None` before its first `setval`.
pub(crate) fn value(sequence: Sequence) -> Result<Option<i64>, Error> {
    let relid = relation(sequence)?;
    Ok(as_bootstrap_superuser(|| {
        // SAFETY: pg_sequence_last_value(regclass) called as the fmgr
        // function it is, with one non-null argument of its type; it
        // returns NULL for a sequence never set.
        unsafe {
            pgrx::direct_function_call::<i64>(pg_sys::pg_sequence_last_value, &[relid.into_datum()])
        }
    }))
}

/// Sets a sequence and returns once the value is on disk.
pub(crate) fn set_durably(sequence: Sequence, value: i64) -> Result<(), Error> {
    let relid = relation(sequence)?;
    as_bootstrap_superuser(|| {
        // SAFETY: setval(regclass, bigint) called as the fmgr function it is,
        // with two non-null arguments of its types, inside the caller's
        // transaction; it raises an SQL error rather than return badly.
        unsafe {
            pgrx::direct_function_call::<i64>(
                pg_sys::setval_oid,
                &[relid.into_datum(), value.into_datum()],
            )
        }
    });
    // SAFETY: XactLastRecEnd is this backend's end of its last WAL record,
    // here setval's; XLogFlush returns once WAL up to it is on disk.
    unsafe { pg_sys::XLogFlush(pg_sys::XactLastRecEnd) };
    Ok(())
}

/// The schema of the sequences, which grants nothing to `PUBLIC`.
const SCHEMA: &CStr = c"snowflake_internal";

/// A sequence of `snowflake_internal` in this database, looked up at
/// every use (a write is rare), so that a re-created extension is found;
/// refused unless it is `LOGGED`, as its value must survive a crash.
fn relation(sequence: Sequence) -> Result<pg_sys::Oid, Error> {
    let name = sequence.name().to_string_lossy();
    let keeps = sequence.keeps();
    let missing = || {
        Error::store_failure(format!(
            "the sequence snowflake_internal.{name}, where the extension keeps {keeps}, is \
             missing: is the extension installed in this database?"
        ))
    };
    // SAFETY: catalog lookups by name with NUL-terminated strings, in a
    // transaction; `true`/InvalidOid report a missing object.
    let relid = unsafe {
        let namespace = pg_sys::get_namespace_oid(SCHEMA.as_ptr(), true);
        if namespace == pg_sys::InvalidOid {
            return Err(missing());
        }
        pg_sys::get_relname_relid(sequence.name().as_ptr(), namespace)
    };
    if relid == pg_sys::InvalidOid {
        return Err(missing());
    }
    // SAFETY: a syscache lookup of a relation that exists, in a transaction.
    let persistence = unsafe { pg_sys::get_rel_persistence(relid) } as u8;
    if persistence != pg_sys::RELPERSISTENCE_PERMANENT {
        // An unlogged sequence is reset by crash recovery: IDs after a
        // crash could fall below those handed out before it.
        return Err(Error::store_failure(format!(
            "the sequence snowflake_internal.{name}, where the extension keeps {keeps}, is not \
             LOGGED, so it would not survive a crash: run ALTER SEQUENCE \
             snowflake_internal.{name} SET LOGGED"
        )));
    }
    Ok(relid)
}

/// Runs `f` as the bootstrap superuser, as a `SECURITY DEFINER` function
/// of its would: the sequence grants nothing to anyone else, so that no
/// role that may call `next_id()` can set, read or lock it.
pub(crate) fn as_bootstrap_superuser<R>(f: impl FnOnce() -> R) -> R {
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

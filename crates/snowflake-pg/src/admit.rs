//! Whether this backend may write the mark here: the refusals that
//! `next_id()` and `adopt_settings()` share.

use std::ffi::{CStr, CString};

use pgrx::{PgSqlErrorCode, pg_sys};

use crate::report::fail_with;
use crate::settings;
use crate::shared::{self, Shared};

/// The shared state, once `function` may write the mark here: not on a
/// standby, not in a read-only transaction or a parallel operation, with
/// the library preloaded. Refused, as an SQL error, otherwise.
pub(crate) fn admit(function: &CStr) -> &'static Shared {
    let name = function.to_string_lossy();
    // SAFETY: RecoveryInProgress reads shared state under its own lock.
    if unsafe { pg_sys::RecoveryInProgress() } {
        fail_with(
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            &format!(
                "{name} writes the high-water mark, which a standby cannot (recovery is \
                 in progress): IDs come from the primary, and from this server once it is \
                 promoted"
            ),
        );
    }
    // SAFETY: raises an SQL error in a read-only transaction: the mark
    // write is a write, and a call that fails only when the mark is due
    // would fail at random.
    unsafe { pg_sys::PreventCommandIfReadOnly(function.as_ptr()) };
    // SAFETY: reads this backend's transaction state.
    if unsafe { pg_sys::IsInParallelMode() } {
        // next_id() is PARALLEL UNSAFE, but a function declared PARALLEL
        // SAFE that calls it can still bring it into a parallel plan; there
        // the mark cannot be written, and a call that fails only when the
        // mark is due would fail at random, so every call is refused.
        fail_with(
            PgSqlErrorCode::ERRCODE_INVALID_TRANSACTION_STATE,
            &format!(
                "{name} writes the high-water mark, which a parallel operation cannot: \
                 declare PARALLEL UNSAFE every function that calls it"
            ),
        );
    }
    match shared::get() {
        Some(shared) => shared,
        None => fail_with(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            &format!(
                "{name} needs the library loaded at the server's start: add 'snowflake' \
                 to shared_preload_libraries and restart the server"
            ),
        ),
    }
}

/// Whether this backend's database is the one whose sequence keeps the
/// mark; `function`, the caller, is named in the refusal.
pub(crate) fn in_the_marks_database(function: &CStr) -> Result<(), String> {
    let name = settings::database();
    let c_name =
        CString::new(name.as_str()).map_err(|_| format!("snowflake.database = '{name}'"))?;
    // SAFETY: a catalog lookup by a NUL-terminated name, in a transaction;
    // MyDatabaseId is set once as the backend starts.
    let (theirs, mine) = unsafe {
        (
            pg_sys::get_database_oid(c_name.as_ptr(), true),
            pg_sys::MyDatabaseId,
        )
    };
    if theirs != mine {
        return Err(format!(
            "{} works in database '{name}' only (snowflake.database), where the generator \
             keeps its high-water mark: one server, one generator",
            function.to_string_lossy()
        ));
    }
    Ok(())
}

//! `snowflake.next_id()`: the core's generator over the server's shared
//! state (see the crate's Design).

use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use pgrx::{PgSqlErrorCode, pg_extern, pg_sys};
use snowflake::{Clock, Generator, SystemClock};

use crate::mark::{self, RESERVE_MS, WalMark};
use crate::record::{self, Written};
use crate::report::{OrFail, fail_with};
use crate::settings;
use crate::shared::{self, Shared};

/// The next ID of this server's generator: strictly greater than every ID
/// it issued before, from any connection, and than every ID it issued
/// before a restart, a crash or a promotion.
#[pg_extern(volatile, parallel_unsafe)]
fn next_id() -> i64 {
    let shared = admit(c"snowflake.next_id()");
    let generator = match backend() {
        Ok(generator) => generator,
        Err(message) => fail_with(PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR, message),
    };
    if !shared.is_ready() {
        resume(shared);
    }
    let id = generator
        .next_id_on(&shared.state, &WalMark(shared))
        .or_fail();
    id.get() as i64
}

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

/// This backend's generator, built once from the settings, which cannot
/// change while it lives; or why there is none, as often as it is asked.
fn backend() -> Result<&'static Generator, &'static str> {
    static GENERATOR: OnceLock<Result<Generator, String>> = OnceLock::new();
    GENERATOR
        .get_or_init(|| {
            in_the_marks_database()?;
            let (layout, node) = settings::read()?;
            let node: Vec<(&str, u64)> = node.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            settings::builder(&layout, &node)
                .build()
                .map_err(|err| format!("{}: {err}", settings::describe()))
        })
        .as_ref()
        .map_err(String::as_str)
}

/// Whether this backend's database is the one whose sequence keeps the mark.
pub(crate) fn in_the_marks_database() -> Result<(), String> {
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
            "snowflake.next_id() issues in database '{name}' only (snowflake.database), where \
             the generator keeps its high-water mark: one server, one generator"
        ));
    }
    Ok(())
}

/// Resumes the shared state above everything issued before this start
/// (the crate's Design, 3), once, by whichever backend gets there first;
/// the others wait for it.
fn resume(shared: &'static Shared) {
    let Some(writing) = shared.write_or_wait(Shared::is_ready) else {
        return;
    };
    if shared.is_ready() {
        return;
    }
    let mark = mark::read().or_fail();
    let floor = mark
        .unwrap_or(i64::MIN)
        .max(SystemClock.now_ms().saturating_add(RESERVE_MS));
    let (layout, node) = match settings::read() {
        Ok(settings) => settings,
        Err(message) => fail_with(PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR, &message),
    };
    // Before the state resumes: IDs under other settings than the mark's
    // can sort below those it covers.
    record::check_or_record(&Written::of(&layout, &node)).or_fail();
    let node: Vec<(&str, u64)> = node.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    settings::builder(&layout, &node)
        .resume(&shared.state, Some(floor))
        .or_fail();
    shared.mark_ms.store(
        mark.unwrap_or(i64::MIN),
        std::sync::atomic::Ordering::Release,
    );
    shared.set_ready(&writing);
}

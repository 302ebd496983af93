//! `snowflake.next_id()`: the core's generator over the server's shared
//! state (see the crate's Design).

use std::sync::OnceLock;

use pgrx::{PgSqlErrorCode, pg_extern};
use snowflake::{Clock, Generator, SystemClock};

use crate::admit::{admit, in_the_marks_database};
use crate::mark::{self, RESERVE_MS, WalMark};
use crate::record::{self, Written};
use crate::report::{OrFail, fail_with};
use crate::settings;
use crate::shared::Shared;

/// The function, as its refusals name it.
const NEXT_ID: &std::ffi::CStr = c"snowflake.next_id()";

/// The next ID of this server's generator: strictly greater than every ID
/// it issued before, from any connection, and than every ID it issued
/// before a restart, a crash or a promotion.
#[pg_extern(volatile, parallel_unsafe)]
fn next_id() -> i64 {
    let shared = admit(NEXT_ID);
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

/// This backend's generator, built once from the settings, which cannot
/// change while it lives; or why there is none, as often as it is asked.
fn backend() -> Result<&'static Generator, &'static str> {
    static GENERATOR: OnceLock<Result<Generator, String>> = OnceLock::new();
    GENERATOR
        .get_or_init(|| {
            in_the_marks_database(NEXT_ID)?;
            let (layout, node) = settings::read()?;
            let node: Vec<(&str, u64)> = node.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            settings::builder(&layout, &node)
                .build()
                .map_err(|err| format!("{}: {err}", settings::describe()))
        })
        .as_ref()
        .map_err(String::as_str)
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

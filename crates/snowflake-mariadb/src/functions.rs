//! The functions the server calls: for each SQL function `f`, `f_init` once
//! per statement (arguments, privileges, settings), `f` once per row, and
//! `f_deinit` at the statement's end.
//!
//! No panic may leave these: unwinding into the server's C++ frames is
//! undefined, and an abort would stop every connection of the server. Each
//! body runs under `catch_unwind`, and a panic becomes the statement's error.

use std::ffi::{CStr, c_char, c_longlong, c_ulong};
use std::panic::{AssertUnwindSafe, catch_unwind};

use snowflake::Layout;

use crate::abi::{self, Args, ItemResult, UdfArgs, UdfInit};
use crate::issuer;
use crate::plugin;
use crate::read::{self, Answer, Kind, Read};

/// `MYSQL_ERRMSG_SIZE`: the buffer `init` may write its message into.
const ERRMSG_SIZE: usize = 512;

/// The database and name of the stored function whose EXECUTE right lets a
/// user issue IDs: the installer creates it and grants it.
const GRANT_DB: &CStr = c"snowflake";
const GRANT_FUNCTION: &CStr = c"next_id";
const GRANTED: &str = "snowflake.next_id";

/// Runs `body`, turning a panic into the statement's error and `fallback`.
fn guarded<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        abi::raise("snowflake: internal error (a panic, caught); see the server's error log");
        fallback
    })
}

/// Ends `init` with `message`: raised as the statement's error where the
/// server allows (its own message for a failed init cuts the text at 80
/// characters, and the first error raised is the one the client sees), and
/// written where the server reads it otherwise.
///
/// # Safety
/// `buffer` is the `message` argument of an `_init` function: at least
/// `ERRMSG_SIZE` writable bytes.
unsafe fn refuse(buffer: *mut c_char, message: &str) -> c_char {
    abi::raise(message);
    let bytes = message.as_bytes();
    let len = bytes.len().min(ERRMSG_SIZE - 1);
    // SAFETY: the caller promises ERRMSG_SIZE bytes; len + 1 fit.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.cast::<u8>(), len);
        *buffer.add(len) = 0;
    }
    1
}

/// Fails the current row: the statement's error where the server allows,
/// NULL and the `error` flag in any case.
///
/// # Safety
/// `is_null` and `error` are the row function's flags, writable.
unsafe fn fail_row(is_null: *mut c_char, error: *mut c_char, message: &str) {
    abi::raise(message);
    // SAFETY: the caller promises both are writable.
    unsafe {
        *is_null = 1;
        *error = 1;
    }
}

// ---- snowflake_next_id() ----------------------------------------------------

/// Whether the current statement may issue IDs, and the generator is ready.
fn next_id_ready(args: &Args<'_>) -> Result<(), String> {
    if args.len() != 0 {
        return Err(format!(
            "snowflake_next_id takes no arguments; it was given {}",
            args.len()
        ));
    }
    match abi::may_execute(GRANT_DB, GRANT_FUNCTION) {
        Some(true) => {}
        Some(false) => {
            return Err(format!(
                "snowflake_next_id: {} may not issue IDs: it needs EXECUTE on \
                 {GRANTED} (GRANT EXECUTE ON FUNCTION {GRANTED} TO ...)",
                abi::effective_user()
            ));
        }
        None => {
            return Err(
                "snowflake_next_id: this server offers no privilege check this library \
                 knows (it is built for MariaDB 10.11 and later), so it issues nothing"
                    .into(),
            );
        }
    }
    statement_logging()?;
    issuer::generator().map(drop)
}

/// Refuses statement-based binary logging: a replica would run the
/// statement again and make other IDs than the primary stored.
fn statement_logging() -> Result<(), String> {
    match abi::logged_as_statement() {
        Some(false) => Ok(()),
        Some(true) => Err(
            "snowflake_next_id: refusing to issue under binlog_format=STATEMENT: a replica \
             would run this statement again and make other IDs; use ROW or MIXED (MIXED logs \
             statements that call it as rows)"
                .into(),
        ),
        None => Err(
            "snowflake_next_id: this server does not say how it logs statements, so it \
             issues nothing"
                .into(),
        ),
    }
}

/// # Safety
/// Called by the server as a loadable function's `init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn snowflake_next_id_init(
    initid: *mut UdfInit,
    args: *mut UdfArgs,
    message: *mut c_char,
) -> c_char {
    guarded(1, || {
        // SAFETY: the server passes valid pointers for the call.
        let args = unsafe { Args::from_raw(args) };
        match next_id_ready(&args) {
            Ok(()) => {
                // SAFETY: initid is the server's, valid for the call.
                unsafe {
                    (*initid).maybe_null = 0;
                    (*initid).const_item = 0;
                }
                0
            }
            // SAFETY: message is init's buffer.
            Err(why) => unsafe { refuse(message, &why) },
        }
    })
}

/// # Safety
/// Called by the server as a loadable function's row function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn snowflake_next_id(
    _initid: *mut UdfInit,
    _args: *mut UdfArgs,
    is_null: *mut c_char,
    error: *mut c_char,
) -> c_longlong {
    guarded(0, || {
        let issued = statement_logging()
            .and_then(|()| issuer::generator())
            .and_then(|generator| {
                generator
                    .next_id()
                    .map_err(|err| format!("snowflake_next_id: {err}"))
            });
        match issued {
            Ok(id) => id.get() as c_longlong,
            Err(why) => {
                // SAFETY: the server's flags for this row.
                unsafe { fail_row(is_null, error, &why) };
                0
            }
        }
    })
}

/// # Safety
/// Called by the server as a loadable function's `deinit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn snowflake_next_id_deinit(_initid: *mut UdfInit) {}

// ---- the read functions -----------------------------------------------------

/// What one statement's call of a read function keeps between rows.
struct Call {
    read: Read,
    /// The layout when it is the same for every row: the default, or a
    /// constant argument.
    layout: Option<Layout>,
    /// The text answer of the last row, which the server reads after the
    /// row function returns.
    out: String,
}

fn read_init(read: Read, args: &mut Args<'_>) -> Result<Call, String> {
    let kinds = read.kinds(args.len())?;
    for (i, kind) in kinds.iter().enumerate() {
        let wanted = match kind {
            Kind::Id => ItemResult::INT,
            Kind::Text => ItemResult::STRING,
        };
        args.coerce(i, wanted);
    }
    // In init only constant arguments have values: a layout given as a
    // column is read on each row.
    let layout = match read::layout_index(read, args.len()) {
        None => Some(issuer::configured_layout(&plugin::options())?),
        Some(i) => args
            .value(i)
            .map(|given| read::layout(read, given))
            .transpose()?,
    };
    Ok(Call {
        read,
        layout,
        out: String::new(),
    })
}

/// `init` of a read function.
///
/// # Safety
/// The server's `init` arguments.
unsafe fn init_read(
    read: Read,
    initid: *mut UdfInit,
    args: *mut UdfArgs,
    message: *mut c_char,
) -> c_char {
    guarded(1, || {
        // SAFETY: the server passes valid pointers for the call.
        let mut args = unsafe { Args::from_raw(args) };
        match read_init(read, &mut args) {
            Ok(call) => {
                let constant = (0..args.len()).all(|i| args.value(i).is_some());
                // SAFETY: initid is the server's, valid for the call; ptr
                // is ours until deinit, which takes the box back.
                unsafe {
                    (*initid).maybe_null = 1;
                    (*initid).const_item = c_char::from(constant);
                    (*initid).max_length = if read.returns_text() { 65_535 } else { 21 };
                    (*initid).ptr = Box::into_raw(Box::new(call)).cast();
                }
                0
            }
            // SAFETY: message is init's buffer.
            Err(why) => unsafe { refuse(message, &why) },
        }
    })
}

/// The answer for one row, or `None` for NULL; an error is raised.
///
/// # Safety
/// The server's row arguments, after a successful `init_read`.
unsafe fn row(
    initid: *mut UdfInit,
    args: *mut UdfArgs,
    is_null: *mut c_char,
    error: *mut c_char,
) -> Option<(*mut Call, Answer)> {
    // SAFETY: init stored a Call in ptr; the server calls rows of one
    // statement one at a time, so nothing else holds it.
    let call = unsafe { (*initid).ptr.cast::<Call>() };
    // SAFETY: as above.
    let state = unsafe { &mut *call };
    // SAFETY: the server passes valid pointers for the call.
    let args = unsafe { Args::from_raw(args) };
    let Some(values) = (0..args.len())
        .map(|i| args.value(i))
        .collect::<Option<Vec<_>>>()
    else {
        // SAFETY: the server's flag for this row.
        unsafe { *is_null = 1 };
        return None;
    };
    let answer = match (&state.layout, read::layout_index(state.read, values.len())) {
        (Some(layout), _) => state.read.answer(&values, layout),
        (None, Some(i)) => read::layout(state.read, values[i])
            .and_then(|layout| state.read.answer(&values, &layout)),
        (None, None) => Err(format!("{}: no layout", state.read.name())),
    };
    match answer {
        Ok(answer) => Some((call, answer)),
        Err(why) => {
            // SAFETY: the server's flags for this row.
            unsafe { fail_row(is_null, error, &why) };
            None
        }
    }
}

/// # Safety
/// The server's row arguments of an integer read function.
unsafe fn int_row(
    initid: *mut UdfInit,
    args: *mut UdfArgs,
    is_null: *mut c_char,
    error: *mut c_char,
) -> c_longlong {
    guarded(0, || {
        // SAFETY: passed through from the server.
        match unsafe { row(initid, args, is_null, error) } {
            Some((_, Answer::Int(n))) => n,
            Some((_, Answer::Text(_))) | None => 0,
        }
    })
}

/// # Safety
/// The server's row arguments of a string read function.
unsafe fn text_row(
    initid: *mut UdfInit,
    args: *mut UdfArgs,
    length: *mut c_ulong,
    is_null: *mut c_char,
    error: *mut c_char,
) -> *mut c_char {
    guarded(std::ptr::null_mut(), || {
        // SAFETY: passed through from the server.
        match unsafe { row(initid, args, is_null, error) } {
            Some((call, Answer::Text(text))) => {
                // SAFETY: the Call lives until deinit, after the server has
                // read the text it points into; length is writable.
                let call = unsafe { &mut *call };
                call.out = text;
                // SAFETY: the server's length, writable.
                unsafe { *length = call.out.len() as c_ulong };
                call.out.as_mut_ptr().cast()
            }
            Some((_, Answer::Int(_))) | None => std::ptr::null_mut(),
        }
    })
}

/// # Safety
/// The server's `deinit` argument, after a successful `init_read`.
unsafe fn deinit_read(initid: *mut UdfInit) {
    guarded((), || {
        // SAFETY: ptr is the box init made, or null when init failed; it
        // is taken back once.
        unsafe {
            let ptr = (*initid).ptr.cast::<Call>();
            if !ptr.is_null() {
                drop(Box::from_raw(ptr));
                (*initid).ptr = std::ptr::null_mut();
            }
        }
    })
}

/// Declares the `init` and `deinit` of a read function, which are the same
/// for every one but for the function they name.
macro_rules! init_and_deinit {
    ($read:expr, $init:ident, $deinit:ident) => {
        /// # Safety
        /// Called by the server as a loadable function's `init`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $init(
            initid: *mut UdfInit,
            args: *mut UdfArgs,
            message: *mut c_char,
        ) -> c_char {
            // SAFETY: the server's init arguments.
            unsafe { init_read($read, initid, args, message) }
        }

        /// # Safety
        /// Called by the server as a loadable function's `deinit`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $deinit(initid: *mut UdfInit) {
            // SAFETY: the server's deinit argument.
            unsafe { deinit_read(initid) }
        }
    };
}

/// Declares the three C functions of an integer read function.
macro_rules! int_function {
    ($read:expr, $init:ident, $row:ident, $deinit:ident) => {
        init_and_deinit!($read, $init, $deinit);

        /// # Safety
        /// Called by the server as a loadable function's row function.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $row(
            initid: *mut UdfInit,
            args: *mut UdfArgs,
            is_null: *mut c_char,
            error: *mut c_char,
        ) -> c_longlong {
            // SAFETY: the server's row arguments.
            unsafe { int_row(initid, args, is_null, error) }
        }
    };
}

/// Declares the three C functions of a string read function.
macro_rules! text_function {
    ($read:expr, $init:ident, $row:ident, $deinit:ident) => {
        init_and_deinit!($read, $init, $deinit);

        /// # Safety
        /// Called by the server as a loadable function's row function.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $row(
            initid: *mut UdfInit,
            args: *mut UdfArgs,
            _result: *mut c_char,
            length: *mut c_ulong,
            is_null: *mut c_char,
            error: *mut c_char,
        ) -> *mut c_char {
            // SAFETY: the server's row arguments.
            unsafe { text_row(initid, args, length, is_null, error) }
        }
    };
}

int_function!(
    Read::TimestampMs,
    snowflake_timestamp_ms_init,
    snowflake_timestamp_ms,
    snowflake_timestamp_ms_deinit
);
text_function!(
    Read::Time,
    snowflake_time_init,
    snowflake_time,
    snowflake_time_deinit
);
int_function!(
    Read::Field,
    snowflake_field_init,
    snowflake_field,
    snowflake_field_deinit
);
text_function!(
    Read::Decode,
    snowflake_decode_init,
    snowflake_decode,
    snowflake_decode_deinit
);
int_function!(
    Read::Compose,
    snowflake_compose_init,
    snowflake_compose,
    snowflake_compose_deinit
);
int_function!(
    Read::MinId,
    snowflake_min_id_init,
    snowflake_min_id,
    snowflake_min_id_deinit
);
int_function!(
    Read::MaxId,
    snowflake_max_id_init,
    snowflake_max_id,
    snowflake_max_id_deinit
);
text_function!(
    Read::ToText,
    snowflake_to_text_init,
    snowflake_to_text,
    snowflake_to_text_deinit
);
int_function!(
    Read::FromText,
    snowflake_from_text_init,
    snowflake_from_text,
    snowflake_from_text_deinit
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_stops_at_the_boundary_with_the_fallback() {
        let got = guarded(7, || -> i32 {
            panic!("inside a function the server called")
        });
        assert_eq!(got, 7);
        assert_eq!(guarded(7, || 8), 8);
    }
}

//! The functions the server calls: for each SQL function `f`, `f_init`,
//! `f` once per row, and `f_deinit`.
//!
//! `init` runs where the server compiles the call: once per statement for a
//! call in the statement's text, but for a column's DEFAULT (or a generated
//! column) whenever a connection opens the table, for any statement, and the
//! call then serves every statement that uses that open table until it is
//! closed. So `init` checks only what the call's text fixes (the arguments);
//! whether the statement may issue (who runs it, how it is binary-logged, the
//! generator) is checked by the row function, the privilege once per
//! statement. Opening a table to read, dump or replicate into it never
//! needs a right to issue, a node or a binary log format.
//!
//! No panic may leave these: unwinding into the server's C++ frames is
//! undefined, and an abort would stop every connection of the server. Each
//! body runs under `catch_unwind`, and a panic becomes the statement's error.

use std::ffi::{CStr, c_char, c_longlong, c_ulong};
use std::panic::{AssertUnwindSafe, catch_unwind};

use snowflake::Layout;

use crate::abi::{
    self, Args, Binlog, Connection, ItemResult, Stage, StatementKey, UdfArgs, UdfInit, Value,
};
use crate::issuer;
use crate::read::{self, Answer, Kind, Read};
use crate::settings;

/// `MYSQL_ERRMSG_SIZE`: the buffer `init` may write its message into.
const ERRMSG_SIZE: usize = 512;

/// The database and name of the stored function whose EXECUTE right lets a
/// user issue IDs: the installer creates it and grants it.
const GRANT_DB: &CStr = c"snowflake";
const GRANT_FUNCTION: &CStr = c"next_id";
const GRANTED: &str = "snowflake.next_id";

/// Runs `body`, turning a panic into the statement's error and `fallback`.
pub fn guarded<T>(fallback: T, body: impl FnOnce() -> T) -> T {
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

/// Fails the current row: NULL, and the statement's error where the server
/// allows, else the `error` flag.
///
/// The flag is the server's memory, not the row's: it is reset only where
/// the call is compiled, so a column DEFAULT, compiled once per opened
/// table, would answer NULL to every later statement of every connection
/// that uses that table. Raised errors fail only the current statement.
///
/// # Safety
/// `is_null` and `error` are the row function's flags, writable.
unsafe fn fail_row(is_null: *mut c_char, error: *mut c_char, message: &str) {
    let raised = abi::raise(message);
    // SAFETY: the caller promises both are writable.
    unsafe {
        *is_null = 1;
        *error = c_char::from(!raised);
    }
}

// ---- snowflake_next_id() ----------------------------------------------------

/// What one compiled call of `snowflake_next_id()` keeps: a statement's, or
/// a column DEFAULT's, which serves one connection at a time for as long as
/// the table stays open.
struct NextId {
    /// The statement whose user was last found to hold EXECUTE.
    allowed: Option<StatementKey>,
}

/// What a row of `snowflake_next_id()` is to get.
enum Row {
    /// A new ID.
    Id,
    /// A value the server computes and throws away: 0, without the
    /// generator.
    Discarded,
}

/// What the current row may get: checked on each row, but for the
/// privilege, which is checked once per statement and user.
///
/// DDL computes a column's DEFAULT in two places: once, for the default
/// row of the table's new form (ALTER TABLE of any kind, even one that only
/// adds an index or sets this very DEFAULT; OPTIMIZE), which no row gets;
/// and, while ALTER TABLE copies the rows, for each row of a column the
/// rows do not have yet, which is stored. The first gets 0, so that no
/// ALTER of a table with this DEFAULT needs a right to issue, a node or a
/// binary log format, on a primary or on a replica that applies it; the
/// second is refused while the DDL is binary-logged, since the server logs
/// DDL as a statement, whatever `binlog_format` says, and a replica would
/// run it again.
fn next_row(call: &mut NextId) -> Result<Row, String> {
    let conn = Connection::current().ok_or(UNKNOWN_SERVER)?;
    let copying = match abi::stage(conn).ok_or(UNKNOWN_SERVER)? {
        Stage::NewTableDefaults => return Ok(Row::Discarded),
        Stage::CopyingRows => true,
        Stage::Other => false,
    };
    if abi::in_replica_applier(conn).ok_or(UNKNOWN_SERVER)? {
        return Err(REPLICA_APPLIER.into());
    }
    match abi::binlog(conn).ok_or(UNKNOWN_SERVER)? {
        Binlog::Off => {}
        Binlog::Statements => return Err(STATEMENT_FORMAT.into()),
        Binlog::Rows if copying => return Err(DDL.into()),
        Binlog::Rows => {}
    }
    if call
        .allowed
        .as_ref()
        .is_some_and(|key| key.is_current(conn))
    {
        return Ok(Row::Id);
    }
    match abi::may_execute(conn, GRANT_DB, GRANT_FUNCTION) {
        Some(true) => {
            call.allowed = StatementKey::current(conn);
            Ok(Row::Id)
        }
        Some(false) => Err(format!(
            "snowflake_next_id: {} may not issue IDs: it needs EXECUTE on \
             {GRANTED} (GRANT EXECUTE ON FUNCTION {GRANTED} TO ...)",
            abi::effective_user(conn)
        )),
        None => Err(UNKNOWN_SERVER.into()),
    }
}

const UNKNOWN_SERVER: &str = "snowflake_next_id: this server does not offer the checks this \
     library makes before it issues (who runs the statement, how it is binary-logged); it is \
     built for MariaDB 10.11 and later, and issues nothing here";

const STATEMENT_FORMAT: &str = "snowflake_next_id: refusing to issue under \
     binlog_format=STATEMENT: the server would log this statement as a statement, and a replica \
     would run it again and make other IDs; set binlog_format to ROW or MIXED (under MIXED, \
     MariaDB logs a statement that calls a loadable function as rows)";

const DDL: &str = "snowflake_next_id: refusing to fill a new column's rows in ALTER TABLE \
     while binary logging is on: MariaDB logs ALTER TABLE as a statement whatever \
     binlog_format says, so a replica would run it again and fill the column with other IDs. \
     Add the column without this DEFAULT (ALTER TABLE t ADD COLUMN id BIGINT NOT NULL DEFAULT \
     0), fill it with UPDATE t SET id = snowflake_next_id(), which is logged as rows, then \
     ALTER TABLE t ALTER COLUMN id SET DEFAULT snowflake_next_id()";

const REPLICA_APPLIER: &str = "snowflake_next_id: refusing to issue in a replica's applier \
     thread: a replica gets the primary's IDs in its row events, and an ID made here would not \
     be the primary's. The primary logged as a statement a statement that makes an ID here: \
     one whose table has no such DEFAULT on the primary but has one on this replica, or one an \
     older version of this library let through (see \"Replication\" in \
     docs/mariadb-function.md)";
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
        if args.len() != 0 {
            let why = format!(
                "snowflake_next_id takes no arguments; it was given {}",
                args.len()
            );
            // SAFETY: message is init's buffer.
            return unsafe { refuse(message, &why) };
        }
        // SAFETY: initid is the server's, valid for the call; ptr is ours
        // until deinit, which takes the box back.
        unsafe {
            (*initid).maybe_null = 0;
            (*initid).const_item = 0;
            (*initid).ptr = Box::into_raw(Box::new(NextId { allowed: None })).cast();
        }
        0
    })
}

/// # Safety
/// Called by the server as a loadable function's row function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn snowflake_next_id(
    initid: *mut UdfInit,
    _args: *mut UdfArgs,
    is_null: *mut c_char,
    error: *mut c_char,
) -> c_longlong {
    guarded(0, || {
        // SAFETY: init stored a NextId in ptr (or failed, and the server
        // calls no row); the server evaluates one compiled call on one
        // thread at a time, so nothing else holds it.
        let call = unsafe { (*initid).ptr.cast::<NextId>().as_mut() };
        let issued = call
            .ok_or_else(|| "snowflake_next_id: called without init".to_string())
            .and_then(next_row)
            .and_then(|row| match row {
                Row::Discarded => Ok(0),
                Row::Id => issuer::generator().and_then(|generator| {
                    generator
                        .next_id()
                        .map(|id| id.get() as c_longlong)
                        .map_err(|err| format!("snowflake_next_id: {err}"))
                }),
            });
        match issued {
            Ok(id) => id,
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
pub unsafe extern "C" fn snowflake_next_id_deinit(initid: *mut UdfInit) {
    guarded((), || {
        // SAFETY: ptr is the box init made, or null when init failed; it
        // is taken back once.
        unsafe { take_back::<NextId>(initid) }
    })
}

/// Drops the box `init` left in `ptr`, if any.
///
/// # Safety
/// `initid` is the server's; its `ptr` is null or a `Box<T>` made by init.
unsafe fn take_back<T>(initid: *mut UdfInit) {
    // SAFETY: as the caller promises; ptr is nulled so it is taken once.
    unsafe {
        let ptr = (*initid).ptr.cast::<T>();
        if !ptr.is_null() {
            drop(Box::from_raw(ptr));
            (*initid).ptr = std::ptr::null_mut();
        }
    }
}

// ---- the read functions -----------------------------------------------------

/// What one compiled call of a read function keeps between rows.
struct Call {
    read: Read,
    layout: LayoutFor,
    /// The text answer of the last row, which the server reads after the
    /// row function returns.
    out: String,
}

/// The layout a call reads IDs under.
enum LayoutFor {
    /// The same for every row: the server's, or a constant text argument.
    Fixed(Layout),
    /// An argument read on each row.
    EachRow,
    /// None, for the reason given, raised on the rows: the server's own
    /// layout is unknown (no plugin) or not one. A table whose generated
    /// column calls a read function still opens.
    Unknown(String),
}

/// `init` of a read function: the number of arguments, each one's type,
/// and the layout when it is known now; whether the call is constant.
fn read_init(read: Read, args: &mut Args<'_>) -> Result<(Call, bool), String> {
    let kinds = read.kinds(args.len())?;
    // Constants in the types the server passed them in, read before coerce
    // asks for others.
    let given: Vec<Option<Value<'_>>> = (0..args.len()).map(|i| args.value(i)).collect();
    for (i, kind) in kinds.iter().enumerate() {
        let wanted = match kind {
            Kind::Id => ItemResult::INT,
            Kind::Text => ItemResult::STRING,
        };
        args.coerce(i, wanted);
    }
    let layout = match read::layout_index(read, args.len()) {
        None => match settings::current() {
            Some(settings) => settings
                .layout()
                .map_or_else(LayoutFor::Unknown, LayoutFor::Fixed),
            None => LayoutFor::Unknown(settings::no_plugin(read.name())),
        },
        // A text constant is read now; a number given as the layout is
        // left to the rows, where the server has written it out as text;
        // a column is read on each row.
        Some(i) => match given[i] {
            Some(text @ Value::Bytes(_)) => LayoutFor::Fixed(read::layout(read, text)?),
            _ => LayoutFor::EachRow,
        },
    };
    let constant = given.iter().all(Option::is_some);
    Ok((
        Call {
            read,
            layout,
            out: String::new(),
        },
        constant,
    ))
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
            Ok((call, constant)) => {
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
        (LayoutFor::Fixed(layout), _) => state.read.answer(&values, layout),
        (LayoutFor::EachRow, Some(i)) => read::layout(state.read, values[i])
            .and_then(|layout| state.read.answer(&values, &layout)),
        (LayoutFor::EachRow, None) => Err(format!("{}: no layout", state.read.name())),
        (LayoutFor::Unknown(why), _) => Err(why.clone()),
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
        // SAFETY: ptr is the box init made, or null when init failed.
        unsafe { take_back::<Call>(initid) }
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

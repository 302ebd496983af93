//! The C side: the structures the server hands a loadable function, read
//! through safe views, and the server's own functions this library calls,
//! looked up by name once.
//!
//! The layouts are those of `mysql_com.h` (`UDF_ARGS`, `UDF_INIT`), which
//! have not changed since MySQL 5.1 and are the same in MariaDB.

use std::ffi::{CStr, c_char, c_int, c_uint, c_ulong, c_ulonglong, c_void};
use std::sync::OnceLock;

/// `enum Item_result`: how an argument reaches the function.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemResult(c_int);

impl ItemResult {
    pub const STRING: ItemResult = ItemResult(0);
    pub const REAL: ItemResult = ItemResult(1);
    pub const INT: ItemResult = ItemResult(2);
    pub const DECIMAL: ItemResult = ItemResult(4);
}

/// `UDF_ARGS`.
#[repr(C)]
#[derive(Debug)]
pub struct UdfArgs {
    arg_count: c_uint,
    arg_type: *mut ItemResult,
    args: *mut *mut c_char,
    lengths: *mut c_ulong,
    maybe_null: *mut c_char,
    attributes: *mut *const c_char,
    attribute_lengths: *mut c_ulong,
    extension: *mut c_void,
}

/// `UDF_INIT`.
#[repr(C)]
#[derive(Debug)]
pub struct UdfInit {
    pub maybe_null: c_char,
    pub decimals: c_uint,
    pub max_length: c_ulong,
    pub ptr: *mut c_char,
    pub const_item: c_char,
    pub extension: *mut c_void,
}

/// One argument's value as the server passes it.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    Int(i64),
    /// A REAL, which only a constant argument in `init` can be (every
    /// argument is coerced to an integer or a string for the rows): its
    /// value is never needed, only that it is not text.
    Real,
    /// Strings, and DECIMALs as the server writes them out.
    Bytes(&'a [u8]),
}

/// The arguments of one call (or, in `init`, of the statement: then only
/// constant arguments have values).
#[derive(Debug)]
pub struct Args<'a>(&'a mut UdfArgs);

impl<'a> Args<'a> {
    /// # Safety
    /// `raw` is the `UDF_ARGS` the server passed to the current call, valid
    /// and not used elsewhere until the call returns.
    pub unsafe fn from_raw(raw: *mut UdfArgs) -> Args<'a> {
        // SAFETY: the caller promises a valid, exclusive pointer for the call.
        Args(unsafe { &mut *raw })
    }

    pub fn len(&self) -> usize {
        self.0.arg_count as usize
    }

    /// Asks the server to pass argument `i` (below `len()`) as `kind`,
    /// converting it first; only meaningful in `init`.
    pub fn coerce(&mut self, i: usize, kind: ItemResult) {
        assert!(i < self.len());
        // SAFETY: arg_type holds arg_count entries, and i is below it.
        unsafe { *self.0.arg_type.add(i) = kind }
    }

    /// Argument `i` (below `len()`), read as the type the server says it
    /// passed, or `None` for NULL (or, in `init`, for an argument that is
    /// not a constant).
    ///
    /// In `init` a constant is passed in its own type, not the one `coerce`
    /// asks for, which applies from the first row on: so `init` reads its
    /// constants before it coerces. Only a string's `lengths` entry is its
    /// length; for a number it is the number's display width, never a size
    /// to read.
    pub fn value(&self, i: usize) -> Option<Value<'a>> {
        assert!(i < self.len());
        // SAFETY: args, arg_type and lengths hold arg_count entries; the
        // server keeps each value alive, of the type arg_type names, for the
        // call: an 8-byte long long or double for INT and REAL, and
        // `lengths[i]` bytes (not NUL-terminated) for STRING and DECIMAL.
        unsafe {
            let ptr = *self.0.args.add(i);
            if ptr.is_null() {
                return None;
            }
            match *self.0.arg_type.add(i) {
                ItemResult::INT => Some(Value::Int(ptr.cast::<i64>().read_unaligned())),
                ItemResult::REAL => Some(Value::Real),
                ItemResult::STRING | ItemResult::DECIMAL => {
                    let len = *self.0.lengths.add(i) as usize;
                    Some(Value::Bytes(std::slice::from_raw_parts(
                        ptr.cast::<u8>(),
                        len,
                    )))
                }
                // ROW_RESULT: the server never passes one.
                _ => None,
            }
        }
    }
}

/// `ER_UNKNOWN_ERROR` (SQLSTATE HY000): the code MariaDB's own plugins
/// raise their messages with.
const ER_UNKNOWN_ERROR: c_uint = 1105;

/// `enum_binlog_format`: what `thd_binlog_format` returns, the session's
/// `binlog_format` when binary logging is on for it, UNSPEC when it is off
/// (no binary log, or `sql_log_bin = 0`).
const BINLOG_FORMAT_STMT: c_int = 1;
const BINLOG_FORMAT_UNSPEC: c_int = 3;

/// `EXECUTE_ACL` in MariaDB's `privilege_t`.
const EXECUTE_ACL: c_ulonglong = 1 << 18;

/// `PSI_stage_info`: a stage's key and name (the server's own, static,
/// text), then fields this library neither reads nor lets be written.
#[repr(C)]
#[derive(Debug)]
struct PsiStageInfo {
    key: c_uint,
    name: *const c_char,
    flags: c_int,
    spare: [usize; 2],
}

impl Default for PsiStageInfo {
    fn default() -> Self {
        PsiStageInfo {
            key: 0,
            name: std::ptr::null(),
            flags: 0,
            spare: [0; 2],
        }
    }
}

/// `LEX_CSTRING`.
#[repr(C)]
struct LexCString {
    str: *const c_char,
    length: usize,
}

type MyMessage = unsafe extern "C" fn(c_uint, *const c_char, c_ulong);
type SqlPrint = unsafe extern "C" fn(*const c_char, ...);
type CurrentThd = unsafe extern "C" fn() -> *mut c_void;
type ThdInt = unsafe extern "C" fn(*const c_void) -> c_int;
/// A C++ `bool` (or `my_bool`): the server sets only the low byte.
type ThdBool = unsafe extern "C" fn(*const c_void) -> u8;
type ThdQueryId = unsafe extern "C" fn(*const c_void) -> c_ulonglong;
type ThdPrivText = unsafe extern "C" fn(*const c_void, *mut usize) -> *const c_char;
type StageInfo = unsafe extern "C" fn(
    *mut c_void,
    *const PsiStageInfo,
    *mut PsiStageInfo,
    *const c_char,
    *const c_char,
    c_uint,
);
type CheckRoutineAccess = unsafe extern "C" fn(
    *mut c_void,
    c_ulonglong,
    *const LexCString,
    *const LexCString,
    *const c_void,
    bool,
) -> bool;

/// The server's functions this library calls, each `None` where the server
/// has no such symbol (another server, or another version).
struct Server {
    my_message: Option<MyMessage>,
    print_error: Option<SqlPrint>,
    print_warning: Option<SqlPrint>,
    print_information: Option<SqlPrint>,
    current_thd: Option<CurrentThd>,
    binlog_format: Option<ThdInt>,
    is_slave: Option<ThdBool>,
    query_id: Option<ThdQueryId>,
    priv_user: Option<ThdPrivText>,
    priv_host: Option<ThdPrivText>,
    stage_info: Option<StageInfo>,
    after_create: *const PsiStageInfo,
    copy_to_tmp_table: *const PsiStageInfo,
    check_routine_access: Option<CheckRoutineAccess>,
    sp_handler_function: *const c_void,
}

// SAFETY: the raw pointers are addresses of server globals that live as
// long as the process: one only ever passed back to the server, one only
// read.
unsafe impl Send for Server {}
// SAFETY: as above; nothing is written through it.
unsafe impl Sync for Server {}

/// The address of `name` (NUL-terminated) in the server process, or null.
fn symbol(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT only reads the loaded objects' symbol
    // tables; the name is a valid C string.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// `symbol` as a function pointer of type `F`.
///
/// # Safety
/// `F` must be the C signature of the function the symbol names.
unsafe fn function<F: Copy>(name: &CStr) -> Option<F> {
    let ptr = symbol(name);
    (!ptr.is_null()).then(|| {
        assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
        // SAFETY: F is a function pointer type of the same size as a data
        // pointer (checked); the caller promises the signature.
        unsafe { std::mem::transmute_copy::<*mut c_void, F>(&ptr) }
    })
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        // SAFETY: each signature is the one MariaDB 10.11 declares:
        // my_message and the thd_ functions in its plugin services
        // (mysql/service_my_print_error.h, mysql/plugin.h, sql/sql_class.cc),
        // _current_thd in sql/sql_class.h, set_thd_stage_info (the
        // thd_stage_info service), and sql_print_* (sql/log.h) and
        // check_routine_access (sql/sql_parse.h) by their C++ names, whose
        // mangling spells out those very parameters: any other would be
        // another name, and not be found. (sql_print_* return nothing, or an
        // int this library does not read.)
        unsafe {
            Server {
                my_message: function(c"my_message"),
                print_error: function(c"_Z15sql_print_errorPKcz"),
                print_warning: function(c"_Z17sql_print_warningPKcz"),
                print_information: function(c"_Z21sql_print_informationPKcz"),
                current_thd: function(c"_current_thd"),
                binlog_format: function(c"thd_binlog_format"),
                is_slave: function(c"thd_is_slave"),
                query_id: function(c"thd_query_id"),
                priv_user: function(c"thd_priv_user"),
                priv_host: function(c"thd_priv_host"),
                stage_info: function(c"set_thd_stage_info"),
                after_create: symbol(c"stage_after_create").cast(),
                copy_to_tmp_table: symbol(c"stage_copy_to_tmp_table").cast(),
                check_routine_access: function(
                    c"_Z20check_routine_accessP3THD11privilege_tPK25st_mysql_const_lex_stringS4_PK10Sp_handlerb",
                ),
                sp_handler_function: symbol(c"sp_handler_function"),
            }
        }
    })
}

/// Raises `message` as the current statement's error, so that the statement
/// fails with it. Returns false where the server has no `my_message`: the
/// caller then has only NULL and its `error` flag to say so.
pub fn raise(message: &str) -> bool {
    let Some(my_message) = server().my_message else {
        return false;
    };
    let mut text: Vec<u8> = message.bytes().filter(|&b| b != 0).collect();
    text.push(0);
    // SAFETY: my_message copies the NUL-terminated text into the current
    // connection's diagnostics area; it is called on that connection's
    // thread, inside a function the server is evaluating for it.
    unsafe { my_message(ER_UNKNOWN_ERROR, text.as_ptr().cast(), 0) };
    true
}

/// The connection (the server's THD) a function runs for, looked up once
/// per call and passed to the questions below.
#[derive(Clone, Copy, Debug)]
pub struct Connection(*mut c_void);

impl Connection {
    /// The calling thread's connection, or `None` where the server does
    /// not say (or outside a server).
    pub fn current() -> Option<Connection> {
        let current_thd = server().current_thd?;
        // SAFETY: _current_thd reads a thread-local of the server; called
        // on a connection's thread it is that connection's THD.
        let thd = unsafe { current_thd() };
        (!thd.is_null()).then_some(Connection(thd))
    }
}

/// How the session's statements go to the binary log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binlog {
    /// Not at all: no binary log, or `sql_log_bin = 0` in the session.
    Off,
    /// `binlog_format = STATEMENT`: as statements.
    Statements,
    /// ROW, or MIXED (which logs a statement that calls a loadable function
    /// as rows): as rows, but for DDL, which the server logs as a
    /// statement whatever the format.
    Rows,
}

/// How the current session's statements are binary-logged; `None` where
/// the server cannot say.
pub fn binlog(conn: Connection) -> Option<Binlog> {
    let format = server().binlog_format?;
    let thd = conn.0;
    // SAFETY: thd_binlog_format reads the calling connection's THD.
    Some(match unsafe { format(thd) } {
        BINLOG_FORMAT_UNSPEC => Binlog::Off,
        BINLOG_FORMAT_STMT => Binlog::Statements,
        _ => Binlog::Rows,
    })
}

/// Where in its work the current statement is, as far as a column's
/// DEFAULT is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// DDL has just made a table's new form and computes its default row
    /// (the stage "After create"), which no row gets.
    NewTableDefaults,
    /// ALTER TABLE copies the rows into the table's new form (the stage
    /// "copy to tmp table"): a DEFAULT is computed only for a column the
    /// rows do not have yet, and stored.
    CopyingRows,
    /// Anything else.
    Other,
}

/// The current statement's stage; `None` where the server cannot say.
pub fn stage(conn: Connection) -> Option<Stage> {
    let server = server();
    let (stage_info, after_create, copying) = (
        server.stage_info?,
        server.after_create,
        server.copy_to_tmp_table,
    );
    if after_create.is_null() || copying.is_null() {
        return None;
    }
    let thd = conn.0;
    let mut current = PsiStageInfo::default();
    // SAFETY: with no new stage, set_thd_stage_info only copies the
    // connection's current stage into `current`; the texts it is given for
    // a new stage are not read. The exported stages are PSI_stage_infos the
    // server never frees.
    let (now, after_create, copying) = unsafe {
        stage_info(
            thd,
            std::ptr::null(),
            &mut current,
            c"".as_ptr(),
            c"".as_ptr(),
            0,
        );
        (current.name, (*after_create).name, (*copying).name)
    };
    // A stage's name is the one static text the server enters it with.
    Some(if now.is_null() {
        Stage::Other
    } else if std::ptr::eq(now, after_create) {
        Stage::NewTableDefaults
    } else if std::ptr::eq(now, copying) {
        Stage::CopyingRows
    } else {
        Stage::Other
    })
}

/// Whether the current thread applies a primary's binary log (a replica's
/// SQL thread or one of its parallel workers); `None` where the server
/// cannot say.
pub fn in_replica_applier(conn: Connection) -> Option<bool> {
    let is_slave = server().is_slave?;
    let thd = conn.0;
    // SAFETY: thd_is_slave reads the calling connection's THD.
    Some(unsafe { is_slave(thd) } != 0)
}

/// Who runs which statement: the connection, the statement's query ID, and
/// the user and host whose rights it runs with (a trigger's or a definer
/// routine's, inside one). The same key needs no second privilege check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementKey {
    thd: usize,
    query_id: u64,
    user: Vec<u8>,
    host: Vec<u8>,
}

impl StatementKey {
    /// The current statement's key; `None` where the server does not say.
    pub fn current(conn: Connection) -> Option<StatementKey> {
        let (thd, query_id, user, host) = statement(conn)?;
        Some(StatementKey {
            thd: thd as usize,
            query_id,
            user: user.to_vec(),
            host: host.to_vec(),
        })
    }

    /// Whether this is the current statement's key, read without copying.
    pub fn is_current(&self, conn: Connection) -> bool {
        statement(conn).is_some_and(|(thd, query_id, user, host)| {
            (thd as usize, query_id, user, host)
                == (self.thd, self.query_id, &self.user[..], &self.host[..])
        })
    }
}

/// The connection, its query ID, user and host, the texts borrowed from its
/// security context for the current statement.
fn statement(conn: Connection) -> Option<(*mut c_void, u64, &'static [u8], &'static [u8])> {
    let server = server();
    let (query_id, priv_user, priv_host) = (server.query_id?, server.priv_user?, server.priv_host?);
    let thd = conn.0;
    // SAFETY: each reads the calling connection's THD. The texts live in
    // its security context while the statement runs; the callers above
    // compare or copy them at once, within the call the server made.
    unsafe {
        Some((
            thd,
            query_id(thd),
            priv_text(priv_user, thd)?,
            priv_text(priv_host, thd)?,
        ))
    }
}

/// The user or host text of the current security context.
///
/// # Safety
/// `read` is thd_priv_user or thd_priv_host, `thd` the calling connection's;
/// the text must not be kept beyond the server's call into this library.
unsafe fn priv_text(read: ThdPrivText, thd: *mut c_void) -> Option<&'static [u8]> {
    let mut len = 0usize;
    // SAFETY: as the caller promises: a pointer into the THD's security
    // context, len bytes long, valid while the statement runs.
    unsafe {
        let ptr = read(thd, &mut len);
        (!ptr.is_null()).then(|| std::slice::from_raw_parts(ptr.cast::<u8>(), len))
    }
}

/// The user (without host) whose rights the current statement runs with.
pub fn effective_user(conn: Connection) -> String {
    let Some(priv_user) = server().priv_user else {
        return "this user".into();
    };
    let thd = conn.0;
    // SAFETY: the calling connection's THD; the text is copied at once.
    match unsafe { priv_text(priv_user, thd) } {
        Some(bytes) => format!("'{}'", String::from_utf8_lossy(bytes)),
        None => "this user".into(),
    }
}

/// How much a line in the server's error log matters.
#[derive(Clone, Copy, Debug)]
pub enum Level {
    Error,
    Warning,
    Note,
}

/// Writes `message` to the server's error log, where the server offers a
/// way to.
pub fn log(level: Level, message: &str) {
    let server = server();
    let print = match level {
        Level::Error => server.print_error,
        Level::Warning => server.print_warning,
        Level::Note => server.print_information,
    };
    let Some(print) = print else {
        return;
    };
    let mut text: Vec<u8> = message.bytes().filter(|&b| b != 0).collect();
    text.push(0);
    // SAFETY: a printf-like function given the format "%s" and one
    // NUL-terminated string, which it reads during the call.
    unsafe { print(c"%s".as_ptr(), text.as_ptr().cast::<c_char>()) };
}

/// Whether the current statement's user (or role, or the definer of the
/// routine or trigger it runs in) may EXECUTE the function `db.name`;
/// `None` where this server offers no way to ask.
pub fn may_execute(conn: Connection, db: &CStr, name: &CStr) -> Option<bool> {
    let server = server();
    let check = server.check_routine_access?;
    if server.sp_handler_function.is_null() {
        return None;
    }
    let thd = conn.0;
    // The server reads these as C strings too: they end in a NUL that the
    // length leaves out.
    let db = LexCString {
        str: db.as_ptr(),
        length: db.count_bytes(),
    };
    let name = LexCString {
        str: name.as_ptr(),
        length: name.count_bytes(),
    };
    // SAFETY: the arguments are what the signature asks: the calling
    // connection's THD, a privilege bit, two LEX_CSTRINGs that outlive the
    // call (it reads them only during it), the server's own handler for
    // stored functions, and no_errors = true, so that it raises nothing.
    // It returns true when access is denied.
    let denied = unsafe {
        check(
            thd,
            EXECUTE_ACL,
            &db,
            &name,
            server.sp_handler_function,
            true,
        )
    };
    Some(!denied)
}

/// The server's version as `MYSQL_VERSION_ID` numbers it (10.11.19 is
/// 101119), read from its `server_version` text; `None` if absent.
pub fn server_version_id() -> Option<c_int> {
    let ptr = symbol(c"server_version");
    if ptr.is_null() {
        return None;
    }
    // SAFETY: server_version is a NUL-terminated char array the server
    // fills before it loads any library.
    let text = unsafe { CStr::from_ptr(ptr.cast::<c_char>()) }
        .to_str()
        .ok()?;
    version_id(text)
}

/// `10.11.19-MariaDB-0+deb12u1` → 101119.
fn version_id(text: &str) -> Option<c_int> {
    let mut parts = text
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<c_int>().ok());
    let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
    (minor < 100 && patch < 100).then_some(major * 10_000 + minor * 100 + patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_ids_read_as_the_server_numbers_them() {
        assert_eq!(version_id("10.11.19-MariaDB-0+deb12u1"), Some(101119));
        assert_eq!(version_id("11.4.2-MariaDB"), Some(110402));
        assert_eq!(version_id("10.11"), None);
        assert_eq!(version_id(""), None);
    }

    #[test]
    fn outside_a_server_nothing_is_found_and_nothing_is_raised() {
        assert!(!raise("no server here"));
        assert!(Connection::current().is_none());
    }
}

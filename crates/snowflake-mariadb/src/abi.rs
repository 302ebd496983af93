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
    pub const INT: ItemResult = ItemResult(2);
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
    /// Strings (every argument that is not an ID is coerced to one).
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

    /// Argument `i` (below `len()`), or `None` for NULL (or, in `init`, for
    /// an argument that is not a constant).
    pub fn value(&self, i: usize) -> Option<Value<'a>> {
        assert!(i < self.len());
        // SAFETY: args, arg_type and lengths hold arg_count entries; the
        // server keeps each value alive, of the type arg_type names, for the
        // call; strings are `lengths[i]` bytes and need not end in a NUL.
        unsafe {
            let ptr = *self.0.args.add(i);
            if ptr.is_null() {
                return None;
            }
            Some(match *self.0.arg_type.add(i) {
                ItemResult::INT => Value::Int(ptr.cast::<i64>().read_unaligned()),
                _ => {
                    let len = *self.0.lengths.add(i) as usize;
                    Value::Bytes(std::slice::from_raw_parts(ptr.cast::<u8>(), len))
                }
            })
        }
    }
}

/// `ER_UNKNOWN_ERROR` (SQLSTATE HY000): the code MariaDB's own plugins
/// raise their messages with.
const ER_UNKNOWN_ERROR: c_uint = 1105;

/// `enum_binlog_format`'s STATEMENT, as `thd_binlog_format` returns it when
/// the session's statements are binary-logged as statements.
pub const BINLOG_FORMAT_STMT: c_int = 1;

/// `EXECUTE_ACL` in MariaDB's `privilege_t`.
const EXECUTE_ACL: c_ulonglong = 1 << 18;

/// `LEX_CSTRING`.
#[repr(C)]
struct LexCString {
    str: *const c_char,
    length: usize,
}

type MyMessage = unsafe extern "C" fn(c_uint, *const c_char, c_ulong);
type CurrentThd = unsafe extern "C" fn() -> *mut c_void;
type ThdInt = unsafe extern "C" fn(*const c_void) -> c_int;
type ThdPrivUser = unsafe extern "C" fn(*const c_void, *mut usize) -> *const c_char;
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
    current_thd: Option<CurrentThd>,
    binlog_format: Option<ThdInt>,
    priv_user: Option<ThdPrivUser>,
    check_routine_access: Option<CheckRoutineAccess>,
    sp_handler_function: *const c_void,
}

// SAFETY: the one raw pointer is the address of a server global that lives
// as long as the process and is only ever passed back to the server.
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
        // (mysql/service_my_print_error.h, mysql/plugin.h), _current_thd
        // in sql/sql_class.h, and check_routine_access (sql/sql_parse.h)
        // by its C++ name, whose mangling spells out that very signature:
        // any other signature would be another name, and not be found.
        unsafe {
            Server {
                my_message: function(c"my_message"),
                current_thd: function(c"_current_thd"),
                binlog_format: function(c"thd_binlog_format"),
                priv_user: function(c"thd_priv_user"),
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

/// The current connection, or `None` where the server does not say.
fn thd() -> Option<*mut c_void> {
    let current_thd = server().current_thd?;
    // SAFETY: _current_thd reads a thread-local of the server; called on a
    // connection's thread it is that connection's THD.
    let thd = unsafe { current_thd() };
    (!thd.is_null()).then_some(thd)
}

/// Whether the current statement is written to the binary log as a
/// statement; `None` where the server cannot say.
pub fn logged_as_statement() -> Option<bool> {
    let format = server().binlog_format?;
    let thd = thd()?;
    // SAFETY: thd_binlog_format reads the THD of the calling connection.
    Some(unsafe { format(thd) } == BINLOG_FORMAT_STMT)
}

/// The user (without host) whose rights the current statement runs with.
pub fn effective_user() -> String {
    let (Some(priv_user), Some(thd)) = (server().priv_user, thd()) else {
        return "this user".into();
    };
    let mut len = 0usize;
    // SAFETY: thd_priv_user returns a pointer into the THD's security
    // context, len bytes long, valid while the statement runs; it is
    // copied at once.
    unsafe {
        let ptr = priv_user(thd, &mut len);
        if ptr.is_null() {
            return "this user".into();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        format!("'{}'", String::from_utf8_lossy(bytes))
    }
}

/// Whether the current statement's user (or role, or the definer of the
/// routine or trigger it runs in) may EXECUTE the function `db.name`;
/// `None` where this server offers no way to ask.
pub fn may_execute(db: &CStr, name: &CStr) -> Option<bool> {
    let server = server();
    let check = server.check_routine_access?;
    if server.sp_handler_function.is_null() {
        return None;
    }
    let thd = thd()?;
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
        assert_eq!(logged_as_statement(), None);
        assert_eq!(may_execute(c"snowflake", c"next_id"), None);
    }
}

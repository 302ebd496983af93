//! The server options: a MariaDB daemon plugin named `snowflake` in the same
//! library, whose read-only system variables are the generator's settings.
//!
//! A loadable function alone cannot have options; a plugin can, and the
//! server then parses them from its option files and command line at start,
//! shows them in `SHOW VARIABLES`, and lets no one change them while it runs
//! (`PLUGIN_VAR_READONLY`): no SQL statement can give a running generator
//! another node. `INSTALL SONAME` loads the plugin at every start from then
//! on; `CREATE FUNCTION ... SONAME` of the same file shares its memory.
//! The plugin's `init` copies the options into this library's memory
//! (`settings.rs`), where the functions read them, since the server frees
//! its strings when the plugin is uninstalled; then it starts the generator
//! when a node is set, so that the mark file exists before the server takes
//! connections.
//!
//! The structures are those of `mysql/plugin.h` (MariaDB's
//! `st_maria_plugin` and the `MYSQL_SYSVAR_STR` and `MYSQL_SYSVAR_LONGLONG`
//! shapes), declared here by hand: the server checks the interface versions
//! and the structure's size it reads from the exported symbols below.

use std::cell::UnsafeCell;
#[cfg(feature = "test-clock")]
use std::ffi::c_longlong;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

use crate::abi;
use crate::issuer::{self, Primed};
use crate::settings::{DEFAULT_LAYOUT, DEFAULT_STATE_FILE, Settings};

/// A static the server writes into: interior mutability keeps it out of
/// read-only memory. The server writes only while it installs the plugin
/// and parses its options, and this library reads the option strings only
/// in the plugin's `init`, which the server calls right after, on the same
/// thread.
#[repr(transparent)]
pub struct Shared<T>(UnsafeCell<T>);

// SAFETY: the server writes these while it installs the plugin, on the
// installing thread, which then runs plugin_init, the only reader of the
// option strings; the declarations themselves are only read.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    const fn new(value: T) -> Self {
        Shared(UnsafeCell::new(value))
    }

    const fn get(&self) -> *mut T {
        self.0.get()
    }
}

const MYSQL_DAEMON_PLUGIN: c_int = 3;
const PLUGIN_LICENSE_BSD: c_int = 2;
const MARIADB_PLUGIN_MATURITY_STABLE: c_uint = 5;
/// `MARIA_PLUGIN_INTERFACE_VERSION` of MariaDB 10.11 (and of 10.6 to 11.x).
const MARIA_PLUGIN_INTERFACE_VERSION: c_int = 0x010f;

const PLUGIN_VAR_STR: c_int = 0x0005;
#[cfg(feature = "test-clock")]
const PLUGIN_VAR_LONGLONG: c_int = 0x0004;
const PLUGIN_VAR_READONLY: c_int = 0x0200;
const PLUGIN_VAR_MEMALLOC: c_int = 0x8000;

type CheckFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *mut c_void) -> c_int;
type UpdateFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *const c_void);

/// `MYSQL_SYSVAR_STR`'s structure.
#[repr(C)]
pub struct StrVar {
    flags: c_int,
    name: *const c_char,
    comment: *const c_char,
    check: Option<CheckFn>,
    update: Option<UpdateFn>,
    value: *mut *mut c_char,
    def_val: *const c_char,
}

impl StrVar {
    /// A string option the server reads at start-up and keeps
    /// (`PLUGIN_VAR_MEMALLOC`), read-only while it runs; `def_val` of `None`
    /// is no default.
    const fn read_only(
        name: &'static CStr,
        comment: &'static CStr,
        value: *mut *mut c_char,
        def_val: Option<&'static CStr>,
    ) -> StrVar {
        StrVar {
            flags: PLUGIN_VAR_STR | PLUGIN_VAR_READONLY | PLUGIN_VAR_MEMALLOC,
            name: name.as_ptr(),
            comment: comment.as_ptr(),
            check: None,
            update: None,
            value,
            def_val: match def_val {
                Some(text) => text.as_ptr(),
                None => std::ptr::null(),
            },
        }
    }
}

/// `MYSQL_SYSVAR_LONGLONG`'s structure.
#[cfg(feature = "test-clock")]
#[repr(C)]
pub struct LongLongVar {
    flags: c_int,
    name: *const c_char,
    comment: *const c_char,
    check: Option<CheckFn>,
    update: Option<UpdateFn>,
    value: *mut c_longlong,
    def_val: c_longlong,
    min_val: c_longlong,
    max_val: c_longlong,
    blk_sz: c_longlong,
}

/// `st_maria_plugin`.
#[repr(C)]
pub struct MariaPlugin {
    kind: c_int,
    info: *mut c_void,
    name: *const c_char,
    author: *const c_char,
    descr: *const c_char,
    license: c_int,
    init: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
    deinit: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
    version: c_uint,
    status_vars: *mut c_void,
    system_vars: *mut *mut c_void,
    version_info: *const c_char,
    maturity: c_uint,
}

static LAYOUT: Shared<*mut c_char> = Shared::new(std::ptr::null_mut());
static FIELDS: Shared<*mut c_char> = Shared::new(std::ptr::null_mut());
static STATE_FILE: Shared<*mut c_char> = Shared::new(std::ptr::null_mut());
static EPOCH: Shared<*mut c_char> = Shared::new(std::ptr::null_mut());
static TICK_MS: Shared<*mut c_char> = Shared::new(std::ptr::null_mut());

static LAYOUT_VAR: Shared<StrVar> = Shared::new(StrVar::read_only(
    c"layout",
    c"The layout of snowflake_next_id() and the default of the read functions: a preset (twitter, discord, instagram, sonyflake, mastodon) or a spec such as time:41,datacenter:5,machine:5,sequence:12",
    LAYOUT.get(),
    Some(DEFAULT_LAYOUT),
));

static FIELDS_VAR: Shared<StrVar> = Shared::new(StrVar::read_only(
    c"fields",
    c"This server's node: every node field of the layout as NAME=VALUE,NAME=VALUE (datacenter=1,machine=7 for twitter). No default: snowflake_next_id() refuses to issue until it is set",
    FIELDS.get(),
    None,
));

static STATE_FILE_VAR: Shared<StrVar> = Shared::new(StrVar::read_only(
    c"state_file",
    c"The file snowflake_next_id() keeps its high-water mark in, locked for this server alone; relative to the data directory",
    STATE_FILE.get(),
    Some(DEFAULT_STATE_FILE),
));

static EPOCH_VAR: Shared<StrVar> = Shared::new(StrVar::read_only(
    c"epoch",
    c"Overrides the layout's epoch, as snowflake --epoch takes it: Unix milliseconds or an RFC 3339 date",
    EPOCH.get(),
    None,
));

static TICK_MS_VAR: Shared<StrVar> = Shared::new(StrVar::read_only(
    c"tick_ms",
    c"Overrides the layout's tick, as snowflake --tick-ms takes it: milliseconds per time unit",
    TICK_MS.get(),
    None,
));

/// Test builds only: how far the generator's clock is from the system's.
#[cfg(feature = "test-clock")]
static TEST_OFFSET_VAR: Shared<LongLongVar> = Shared::new(LongLongVar {
    flags: PLUGIN_VAR_LONGLONG,
    name: c"test_clock_offset_ms".as_ptr(),
    comment:
        c"TEST BUILD ONLY: milliseconds added to the system clock that snowflake_next_id() reads"
            .as_ptr(),
    check: None,
    update: Some(set_test_offset),
    value: crate::clock::TEST_OFFSET_MS.as_ptr(),
    def_val: 0,
    min_val: -86_400_000,
    max_val: 86_400_000,
    blk_sz: 0,
});

#[cfg(feature = "test-clock")]
unsafe extern "C" fn set_test_offset(
    _thd: *mut c_void,
    _var: *mut c_void,
    _var_ptr: *mut c_void,
    save: *const c_void,
) {
    // SAFETY: for a LONGLONG variable the server passes a checked long long
    // in `save`.
    let value = unsafe { save.cast::<c_longlong>().read() };
    crate::clock::TEST_OFFSET_MS.store(value, std::sync::atomic::Ordering::SeqCst);
}

#[cfg(not(feature = "test-clock"))]
const VAR_COUNT: usize = 5;
#[cfg(feature = "test-clock")]
const VAR_COUNT: usize = 6;

static SYSTEM_VARS: Shared<[*mut c_void; VAR_COUNT + 1]> = Shared::new([
    LAYOUT_VAR.get().cast(),
    FIELDS_VAR.get().cast(),
    STATE_FILE_VAR.get().cast(),
    EPOCH_VAR.get().cast(),
    TICK_MS_VAR.get().cast(),
    #[cfg(feature = "test-clock")]
    TEST_OFFSET_VAR.get().cast(),
    std::ptr::null_mut(),
]);

/// `st_mysql_daemon`: only the interface version, which for daemon plugins
/// is the server's own version (`MYSQL_VERSION_ID << 8`): set as the
/// library loads, from the server it is loaded into.
static DAEMON: Shared<c_int> = Shared::new(0);

unsafe extern "C" fn plugin_init(_plugin: *mut c_void) -> c_int {
    crate::functions::guarded(1, || {
        // SAFETY: the server parsed the options into these just before it
        // called init, on this thread.
        let settings = unsafe { read_options() };
        if let Err(why) = issuer::adopt(settings) {
            abi::raise(&why);
            abi::log(abi::Level::Error, &why);
            return 1;
        }
        match issuer::prime() {
            Ok(Primed::Issuing { settings, mark }) => abi::log(
                abi::Level::Note,
                &format!(
                    "snowflake: snowflake_next_id() issues with {settings}; its mark file is {}",
                    mark.display()
                ),
            ),
            Ok(Primed::NoNode) => abi::log(
                abi::Level::Note,
                "snowflake: snowflake_fields is not set, so snowflake_next_id() issues \
                 nothing on this server (the read functions work)",
            ),
            Err(why) => abi::log(
                abi::Level::Warning,
                &format!("{why} (tried as the plugin started; each call tries again)"),
            ),
        }
        0
    })
}

/// Nothing to undo: the settings and the generator outlive the plugin, as
/// the library does (see `issuer.rs`).
unsafe extern "C" fn plugin_deinit(_plugin: *mut c_void) -> c_int {
    0
}

#[unsafe(no_mangle)]
#[used]
pub static _maria_plugin_interface_version_: c_int = MARIA_PLUGIN_INTERFACE_VERSION;

#[unsafe(no_mangle)]
#[used]
pub static _maria_sizeof_struct_st_plugin_: c_int = size_of::<MariaPlugin>() as c_int;

#[unsafe(no_mangle)]
#[used]
pub static _maria_plugin_declarations_: Shared<[MariaPlugin; 2]> = Shared::new([
    MariaPlugin {
        kind: MYSQL_DAEMON_PLUGIN,
        info: DAEMON.get().cast(),
        name: c"snowflake".as_ptr(),
        author: c"the snowflake project".as_ptr(),
        descr: c"The settings of snowflake_next_id(): snowflake_layout, snowflake_epoch, snowflake_tick_ms, snowflake_fields, snowflake_state_file".as_ptr(),
        license: PLUGIN_LICENSE_BSD,
        init: Some(plugin_init),
        deinit: Some(plugin_deinit),
        version: 0x0100,
        status_vars: std::ptr::null_mut(),
        system_vars: SYSTEM_VARS.get().cast(),
        version_info: c"0.1.0".as_ptr(),
        maturity: MARIADB_PLUGIN_MATURITY_STABLE,
    },
    MariaPlugin {
        kind: 0,
        info: std::ptr::null_mut(),
        name: std::ptr::null(),
        author: std::ptr::null(),
        descr: std::ptr::null(),
        license: 0,
        init: None,
        deinit: None,
        version: 0,
        status_vars: std::ptr::null_mut(),
        system_vars: std::ptr::null_mut(),
        version_info: std::ptr::null(),
        maturity: 0,
    },
]);

/// Runs as the server loads the library, before it reads the declarations.
extern "C" fn on_load() {
    if let Some(id) = crate::abi::server_version_id() {
        // SAFETY: the loader runs this once, before the server or any other
        // thread can read DAEMON through the declarations.
        unsafe { DAEMON.get().write(id << 8) };
    }
}

#[used]
// SAFETY: a pointer to a function that takes and returns nothing, run by
// the dynamic loader as the library loads, as C constructors are.
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;

/// The option strings, copied.
///
/// # Safety
/// Only in `plugin_init`: the server set the pointers just before, to null
/// or NUL-terminated strings it keeps until the plugin is uninstalled.
unsafe fn read_options() -> Settings {
    // SAFETY: as the caller promises.
    let text = |var: &Shared<*mut c_char>| unsafe {
        let ptr = var.get().read();
        (!ptr.is_null()).then(|| CStr::from_ptr(ptr).to_string_lossy().into_owned())
    };
    Settings {
        layout: text(&LAYOUT).unwrap_or_else(|| DEFAULT_LAYOUT.to_string_lossy().into_owned()),
        fields: text(&FIELDS),
        state_file: text(&STATE_FILE)
            .unwrap_or_else(|| DEFAULT_STATE_FILE.to_string_lossy().into_owned()),
        epoch: text(&EPOCH),
        tick_ms: text(&TICK_MS),
    }
}

//! The settings the plugin's options gave, copied into this library's own
//! memory as the plugin starts, and read from there by the generator and the
//! read functions alike.
//!
//! The server owns the option strings and frees them when the plugin is
//! uninstalled (`UNINSTALL SONAME`), while the functions, which are not the
//! plugin, go on running: so nothing reads the server's strings after the
//! plugin's `init` has copied them. The copy outlives the plugin: until the
//! server stops, the read functions decode with the layout the generator
//! issues in, plugin or not.

use std::ffi::CStr;
use std::sync::{Arc, Mutex};

use snowflake::Layout;
use snowflake_io::resolve_layout;

/// The preset or spec the generator and the read functions use when
/// `snowflake_layout` is not set.
pub const DEFAULT_LAYOUT: &CStr = c"twitter";
/// The mark file when `snowflake_state_file` is not set, relative to the
/// data directory (the server's working directory).
pub const DEFAULT_STATE_FILE: &CStr = c"snowflake.mark";

/// The plugin's options as the server parsed them, defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub layout: String,
    pub fields: Option<String>,
    pub state_file: String,
    pub epoch: Option<String>,
    pub tick_ms: Option<String>,
}

impl Settings {
    /// The layout these settings name, with their epoch and tick.
    pub fn layout(&self) -> Result<Layout, String> {
        resolve_layout(&self.layout, self.epoch.as_deref(), self.tick_ms.as_deref())
            .map_err(|err| format!("snowflake_layout {:?}: {err}", self.layout))
    }
}

static CURRENT: Mutex<Option<Arc<Settings>>> = Mutex::new(None);

/// The settings the plugin last started with, or `None` when it has not
/// started since the library was loaded.
pub fn current() -> Option<Arc<Settings>> {
    CURRENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

/// Makes `settings` the current ones.
pub fn replace(settings: Settings) {
    *CURRENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Arc::new(settings));
}

/// Why a read function without a layout argument has no layout: the plugin
/// that holds the server's setting has not started.
pub fn no_plugin(function: &str) -> String {
    format!(
        "{function}: no layout was given and the snowflake plugin, which holds \
         snowflake_layout, is not loaded: pass the layout as the last argument (a preset such \
         as 'twitter', or a spec), or add plugin_load_add = snowflake_mariadb.so to the \
         server's options and restart"
    )
}

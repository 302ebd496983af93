//! The one generator of the server process, built from the server options
//! the first time `snowflake_next_id()` is called, and shared by every
//! connection: the core's lock-free generator as it is.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use snowflake::{Generator, Layout};
use snowflake_io::{parse_fields, resolve_layout, split_fields};
use snowflake_store::FileMarkStore;

use crate::clock::{ServerClock, server_clock};
use crate::plugin::{self, DEFAULT_LAYOUT, DEFAULT_STATE_FILE, Options};

static GENERATOR: OnceLock<Generator<ServerClock>> = OnceLock::new();
/// Held while a generator is built, so that only one ever is; a failed
/// build leaves nothing behind and the next call tries again (a mark file
/// another server held may have been freed).
static BUILDING: Mutex<()> = Mutex::new(());

/// The generator, built on first use.
pub fn generator() -> Result<&'static Generator<ServerClock>, String> {
    if let Some(generator) = GENERATOR.get() {
        return Ok(generator);
    }
    let _building = BUILDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(generator) = GENERATOR.get() {
        return Ok(generator);
    }
    let generator = build(&plugin::options())?;
    Ok(GENERATOR.get_or_init(|| generator))
}

/// The layout the options name, for the generator and as the read
/// functions' default.
pub fn configured_layout(options: &Options) -> Result<Layout, String> {
    let text = options
        .layout
        .as_deref()
        .unwrap_or(DEFAULT_LAYOUT.to_str().unwrap_or("twitter"));
    resolve_layout(text, options.epoch.as_deref(), options.tick_ms.as_deref())
        .map_err(|err| format!("snowflake_layout {text:?}: {err}"))
}

fn build(options: &Options) -> Result<Generator<ServerClock>, String> {
    if !options.loaded {
        return Err(
            "snowflake_next_id: the snowflake plugin, which holds its settings, is not \
             loaded: add plugin_load_add = snowflake_mariadb.so and snowflake_fields to the \
             server's options and restart (scripts/mariadb-function install writes them)"
                .into(),
        );
    }
    let layout = configured_layout(options)?;
    fits_bigint(&layout)?;
    let text = options.fields.as_deref().unwrap_or("");
    let pairs = split_fields(text);
    let missing: Vec<&str> = layout
        .node_fields()
        .map(|f| f.name())
        .filter(|name| !pairs.iter().any(|(given, _)| given == name))
        .collect();
    if !missing.is_empty() {
        let example: Vec<String> = layout
            .node_fields()
            .map(|f| format!("{}=N", f.name()))
            .collect();
        return Err(format!(
            "snowflake_next_id: no node is set{}: {} not given; set snowflake_fields in the \
             server's options (snowflake_fields={} under [mariadbd] for layout {}), one node \
             per server, and restart",
            if text.trim().is_empty() {
                String::new()
            } else {
                format!(" in full (snowflake_fields is {text:?})")
            },
            missing.join(" and "),
            example.join(","),
            layout.name(),
        ));
    }
    let node = parse_fields(&layout, &pairs).map_err(|err| format!("snowflake_fields: {err}"))?;
    let state_file = state_path(options.state_file.as_deref());
    Generator::builder(layout)
        .node(&node)
        .clock(server_clock())
        .store(FileMarkStore::new(&state_file))
        .build()
        .map_err(|err| format!("snowflake_next_id: {err}"))
}

/// The mark file's path, made absolute against the data directory (the
/// server's working directory) so that messages name it in full.
fn state_path(option: Option<&str>) -> PathBuf {
    let path = Path::new(option.unwrap_or(DEFAULT_STATE_FILE.to_str().unwrap_or("snowflake.mark")));
    match std::env::current_dir() {
        Ok(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// Refuses a layout whose IDs pass the largest BIGINT, naming when: the
/// server takes a function's integer as signed.
fn fits_bigint(layout: &Layout) -> Result<(), String> {
    if layout.has_sign_bit() {
        return Ok(());
    }
    let unit = 1u64 << (63 - layout.time_shift());
    let when = snowflake::UnixMillis(layout.timestamp_ms(unit));
    Err(format!(
        "snowflake_layout {}: its IDs pass 9223372036854775807, the largest BIGINT, from \
         {when} on, and MariaDB takes a function's integers as signed: choose a layout with a \
         sign bit (63 bits or fewer)",
        layout.name()
    ))
}

//! The one generator of the server process, built from the settings the
//! plugin copied (as the plugin starts, or on the first call that issues),
//! and shared by every connection: the core's lock-free generator as it is.
//!
//! It lives as long as the process: the library is linked so that the
//! loader never unloads it (`-z nodelete`, see `build.rs`), so dropping
//! every function and uninstalling the plugin leaves the generator, its
//! mark file and the lock on it in place, and functions created again find
//! the same generator; two generators never hold one mark file in one
//! server. A new build of the library is loaded at the server's next start.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use snowflake::{ErrorKind, Generator, Layout};
use snowflake_io::{parse_fields, split_fields};
use snowflake_store::FileMarkStore;

use crate::clock::{ServerClock, server_clock};
use crate::settings::{self, Settings};

/// The generator and the settings it was built from.
struct Issuing {
    settings: Arc<Settings>,
    generator: Generator<ServerClock>,
}

static ISSUING: OnceLock<Issuing> = OnceLock::new();
/// Held while a generator is built or the settings are replaced, so that
/// only one generator ever is, from the settings current at the time; a
/// failed build leaves nothing behind and the next call tries again (a mark
/// file another server held may have been freed).
static BUILDING: Mutex<()> = Mutex::new(());

fn building() -> std::sync::MutexGuard<'static, ()> {
    BUILDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The generator, built on first use.
pub fn generator() -> Result<&'static Generator<ServerClock>, String> {
    issuing().map(|issuing| &issuing.generator)
}

fn issuing() -> Result<&'static Issuing, String> {
    if let Some(issuing) = ISSUING.get() {
        return Ok(issuing);
    }
    let _building = building();
    if let Some(issuing) = ISSUING.get() {
        return Ok(issuing);
    }
    let settings = settings::current().ok_or_else(|| {
        "snowflake_next_id: the snowflake plugin, which holds its settings, is not \
         loaded: add plugin_load_add = snowflake_mariadb.so and snowflake_fields to the \
         server's options and restart (scripts/mariadb-function install writes them)"
            .to_string()
    })?;
    let generator = build(&settings)?;
    Ok(ISSUING.get_or_init(|| Issuing {
        settings,
        generator,
    }))
}

/// Takes the settings the plugin starts with. Refused when a generator
/// already issues under other ones (the plugin reinstalled after its
/// options changed): the server must restart to change them, or the read
/// functions would decode in one layout while IDs are made in another.
pub fn adopt(new: Settings) -> Result<(), String> {
    let _building = building();
    if let Some(issuing) = ISSUING.get()
        && *issuing.settings != new
    {
        return Err(format!(
            "snowflake: this server's snowflake_next_id() issues with {}; the plugin's options \
             now say {}: restart the server to change them (the library and its generator \
             stay loaded until it stops)",
            describe(&issuing.settings),
            describe(&new)
        ));
    }
    settings::replace(new);
    Ok(())
}

fn describe(settings: &Settings) -> String {
    format!(
        "layout {} (epoch {}, tick {}), fields {}, state file {}",
        settings.layout,
        settings.epoch.as_deref().unwrap_or("the layout's"),
        settings.tick_ms.as_deref().unwrap_or("the layout's"),
        settings.fields.as_deref().unwrap_or("unset"),
        settings.state_file
    )
}

/// What starting the generator with the plugin came to.
#[derive(Debug)]
pub enum Primed {
    /// No node is set: nothing issues, nothing is written.
    NoNode,
    /// The generator issues, and its mark file exists.
    Issuing { settings: String, mark: PathBuf },
}

/// Builds the generator and issues one ID, which is thrown away, so that
/// its mark file exists from the plugin's start on (at a server's start,
/// before it takes connections): a user with FILE can then never plant a
/// mark of their own there with `SELECT ... INTO OUTFILE`, which makes only
/// new files.
pub fn prime() -> Result<Primed, String> {
    let settings = settings::current();
    if settings
        .as_ref()
        .is_none_or(|s| s.fields.as_deref().is_none_or(|f| f.trim().is_empty()))
    {
        return Ok(Primed::NoNode);
    }
    let issuing = issuing()?;
    issuing
        .generator
        .next_id()
        .map_err(|err| format!("snowflake_next_id: {err}"))?;
    Ok(Primed::Issuing {
        settings: describe(&issuing.settings),
        mark: state_path(&issuing.settings.state_file)?,
    })
}

fn build(settings: &Settings) -> Result<Generator<ServerClock>, String> {
    let layout = settings.layout()?;
    fits_bigint(&layout)?;
    let text = settings.fields.as_deref().unwrap_or("");
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
    let state_file = state_path(&settings.state_file)?;
    Generator::builder(layout)
        .node(&node)
        .clock(server_clock())
        .store(FileMarkStore::new(&state_file))
        .build()
        .map_err(|err| {
            let advice = if err.kind() == ErrorKind::Store {
                MARK_ADVICE
            } else {
                ""
            };
            format!("snowflake_next_id: {err}{advice}")
        })
}

/// Added to a refused mark file's message: the way out an operator reaches
/// for first, deleting it, is the one that can repeat IDs.
const MARK_ADVICE: &str = ". Do not delete the mark file, or start from a new one, to get \
     past this: it is what keeps a restarted server above every ID it issued. Put the clock \
     right, or start with the layout, epoch and tick the file names; a damaged file may be \
     moved aside only with the server stopped and its clock past the newest ID it issued \
     (SELECT MAX(snowflake_timestamp_ms(id)) over the tables) by more than a second (see \"The \
     mark file\" in docs/mariadb-function.md)";

/// The mark file's path: `option` inside the data directory (the server's
/// working directory), made absolute so that messages name it in full. A
/// path that leaves the data directory is refused: a mark in a shared
/// directory such as /tmp could be planted or locked by other users, and
/// the data directory is what backups and a restore carry with the tables.
fn state_path(option: &str) -> Result<PathBuf, String> {
    let datadir = std::env::current_dir()
        .map_err(|err| format!("snowflake_state_file: the data directory is unknown: {err}"))?;
    inside(&datadir, Path::new(option)).ok_or_else(|| {
        format!(
            "snowflake_state_file {option:?} is not inside the data directory {}: give a \
             file name, or a path below the data directory without \"..\"",
            datadir.display()
        )
    })
}

/// `path` below `dir`, when it names a file there without going up:
/// relative without `..`, or absolute under `dir`.
fn inside(dir: &Path, path: &Path) -> Option<PathBuf> {
    let rest = if path.is_absolute() {
        path.strip_prefix(dir).ok()?
    } else {
        path
    };
    let mut joined = dir.to_path_buf();
    let mut last_is_name = false;
    for part in rest.components() {
        match part {
            Component::Normal(name) => joined.push(name),
            Component::CurDir => {}
            _ => return None,
        }
        last_is_name = matches!(part, Component::Normal(_));
    }
    last_is_name.then_some(joined)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_file_stays_inside_the_data_directory() {
        let dir = Path::new("/var/lib/mysql");
        for (given, want) in [
            ("snowflake.mark", Some("/var/lib/mysql/snowflake.mark")),
            (
                "ids/snowflake.mark",
                Some("/var/lib/mysql/ids/snowflake.mark"),
            ),
            ("./snowflake.mark", Some("/var/lib/mysql/snowflake.mark")),
            (
                "/var/lib/mysql/snowflake.mark",
                Some("/var/lib/mysql/snowflake.mark"),
            ),
            ("../../escape.mark", None),
            ("ids/../../escape.mark", None),
            ("/tmp/snowflake.mark", None),
            ("/var/lib/mysql", None),
            ("/var/lib/mysql-other/snowflake.mark", None),
            ("", None),
            (".", None),
        ] {
            assert_eq!(
                inside(dir, Path::new(given)),
                want.map(PathBuf::from),
                "{given:?}"
            );
        }
    }
}

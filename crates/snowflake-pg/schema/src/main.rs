//! Writes the extension's SQL script from the schema that pgrx embeds in
//! the built library (its `.pgrxsc` section): what `cargo pgrx schema`
//! does, with the same version of pgrx's entity graph, so that installing
//! the extension does not first build cargo-pgrx and its HTTP, TLS and
//! archive stack (the longest part of a fresh install, and no part of the
//! SQL).
//!
//! ```text
//! snowflake-pg-schema LIBRARY CONTROL VERSION OUT
//! ```

use std::process::ExitCode;

use object::{Object, ObjectSection};
use pgrx_sql_entity_graph::section::{decode_entities, is_schema_section_name};
use pgrx_sql_entity_graph::{ControlFile, PgrxSql, SqlGraphEntity};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [library, control, version, out] = args.as_slice() else {
        eprintln!("usage: snowflake-pg-schema LIBRARY CONTROL VERSION OUT");
        return ExitCode::from(2);
    };
    match write_schema(library, control, version, out) {
        Ok(count) => {
            eprintln!("snowflake-pg-schema: {count} SQL entities from {library} to {out}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("snowflake-pg-schema: {err}");
            ExitCode::FAILURE
        }
    }
}

fn write_schema(library: &str, control: &str, version: &str, out: &str) -> Result<usize, String> {
    let bytes = std::fs::read(library).map_err(|e| format!("cannot read {library}: {e}"))?;
    let file = object::File::parse(&*bytes).map_err(|e| format!("{library}: {e}"))?;
    let section = file
        .sections()
        .find(|s| s.name().is_ok_and(is_schema_section_name))
        .ok_or_else(|| {
            format!(
                "{library} has no pgrx schema section: was it linked with -Wl,--no-gc-sections?"
            )
        })?;
    let data = section.data().map_err(|e| format!("{library}: {e}"))?;
    let mut entities = decode_entities(data).map_err(|e| format!("{library}: {e:#}"))?;
    let control = ControlFile::from_path_with_cargo_version(control, version)
        .map_err(|e| format!("{control}: {e}"))?;
    entities.insert(0, SqlGraphEntity::ExtensionRoot(control));
    let count = entities.len();
    // Not versioned: the control file names the library (module_pathname).
    let sql = PgrxSql::build(entities.into_iter(), "snowflake".into(), false)
        .map_err(|e| format!("SQL generation: {e:#}"))?;
    sql.to_file(out).map_err(|e| format!("{out}: {e:#}"))?;
    Ok(count)
}

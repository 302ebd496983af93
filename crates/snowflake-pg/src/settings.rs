//! The server's settings: `snowflake.layout`, `snowflake.fields` and
//! `snowflake.database`, and the generator a backend builds from them.
//!
//! All three are `PGC_POSTMASTER`: set in `postgresql.conf` or with
//! `ALTER SYSTEM`, read at the server's start, the same in every backend
//! until the next. A state word issued under one layout means nothing
//! under another, so no layout may change under a running state.

use std::ffi::{CStr, CString};

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use snowflake::{Generator, GeneratorBuilder, Layout, UnixMillis};

use crate::pairs;

static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"twitter"));
static FIELDS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static DATABASE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));

/// Registers the settings; called once, as the library loads.
pub(crate) fn define() {
    GucRegistry::define_string_guc(
        c"snowflake.layout",
        c"The layout of the IDs snowflake.next_id() issues.",
        c"A preset (twitter, discord, instagram, sonyflake, mastodon, js53) or a spec such as \
          'time:41,node:10,sequence:12', as the snowflake command's --layout takes it.",
        &LAYOUT,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowflake.fields",
        c"The node of this server: its values of the layout's node fields.",
        c"As the snowflake command's -f takes them, e.g. 'datacenter=1,machine=7'. \
          No default: a server without one issues no ID.",
        &FIELDS,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowflake.database",
        c"The database whose snowflake_internal.mark sequence holds the generator's high-water mark.",
        c"One generator per server, so one database keeps its mark; snowflake.next_id() \
          issues in that database only.",
        &DATABASE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
}

/// The database named by `snowflake.database`.
pub(crate) fn database() -> String {
    text(&DATABASE).unwrap_or_default()
}

fn text(setting: &GucSetting<Option<CString>>) -> Option<String> {
    setting
        .get()
        .map(|value| value.to_string_lossy().into_owned())
}

/// A builder of this server's generator, from what [`read`] returned: the
/// core's defaults for the tolerance (5 ms) and the reserve window (1 s),
/// no lead, so that no ID runs ahead of the clock (the crate's Design, 3).
pub(crate) fn builder<'a>(
    layout: &Layout,
    node: &'a [(&'a str, u64)],
) -> GeneratorBuilder<'a, snowflake::SystemClock> {
    Generator::builder(layout.clone()).node(node)
}

/// The layout and node values the settings name, or why they cannot be
/// used.
pub(crate) fn read() -> Result<(Layout, Vec<(String, u64)>), String> {
    let layout_text = text(&LAYOUT).unwrap_or_default();
    let layout = Layout::parse(&layout_text)
        .map_err(|err| format!("snowflake.layout = '{layout_text}' is not a layout: {err}"))?;
    if layout.bits() == 64 {
        // The time field is the top one: IDs reach 2^63 when its top bit
        // turns on.
        let reach_ms = layout.timestamp_ms(1 << (layout.time_bits() - 1));
        return Err(format!(
            "snowflake.layout = '{layout_text}' uses all 64 bits: its IDs pass 2^63, the largest \
             bigint, from {}; choose a layout of 63 bits or fewer for bigint columns",
            UnixMillis(reach_ms)
        ));
    }
    let fields_text = text(&FIELDS).unwrap_or_default();
    let node: Vec<(String, u64)> = pairs::parse(&layout, &fields_text)
        .map_err(|err| format!("snowflake.fields = '{fields_text}': {err}"))?
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    // Every node field named, never one left to 0: a server given
    // 'machine=7' under twitter would otherwise issue as datacenter 0, the
    // same node as every other server given only its machine.
    let names: Vec<&str> = layout.node_fields().map(|f| f.name()).collect();
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !node.iter().any(|(given, _)| given == name))
        .collect();
    if !missing.is_empty() {
        let example: Vec<String> = names.iter().map(|name| format!("{name}=N")).collect();
        let what = if node.is_empty() {
            "names no node field, so this server has no node and issues no ID".to_owned()
        } else {
            format!(
                "leaves out {}, so this server issues no ID",
                prose(&missing)
            )
        };
        return Err(format!(
            "snowflake.fields = '{fields_text}' {what} (never node 0 by default): set every \
             node field of snowflake.layout = '{layout_text}': {}, e.g. snowflake.fields = \
             '{}', in postgresql.conf or with ALTER SYSTEM, and restart the server",
            prose(&names),
            example.join(",")
        ));
    }
    Ok((layout, node))
}

/// Names as prose: `a`, `a and b`, `a, b and c`.
fn prose(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The settings' values as `SHOW` would print them, for messages.
pub(crate) fn describe() -> String {
    let show = |name: &CStr, setting: &GucSetting<Option<CString>>| {
        format!(
            "{} = '{}'",
            name.to_string_lossy(),
            text(setting).unwrap_or_default()
        )
    };
    [
        show(c"snowflake.layout", &LAYOUT),
        show(c"snowflake.fields", &FIELDS),
    ]
    .join(", ")
}

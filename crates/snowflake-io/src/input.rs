//! Text from the user turned into core values, with the core's errors: the
//! one place the CLI and the HTTP API both parse times, layouts and fields.

use snowflake::{Error, Layout, UnixMillis};

/// A time given as Unix milliseconds or as an RFC 3339 date.
///
/// ```
/// use snowflake_io::parse_time;
///
/// assert_eq!(parse_time("from", "2010-11-04T01:42:55.657Z")?, 1288834975657);
/// assert_eq!(parse_time("from", "1288834975657")?, 1288834975657);
/// assert!(parse_time("from", "tomorrow").is_err());
/// # Ok::<(), snowflake::Error>(())
/// ```
///
/// The core reads both ([`UnixMillis::parse`]), as the WebAssembly module
/// does, so the npm package and the command agree on every such time (a
/// test holds the core to `jiff`'s reading); `jiff` reads what else
/// Temporal allows, such as `2024-01-31T12:00+01:00[Europe/Paris]`.
pub fn parse_time(field: &'static str, text: &str) -> Result<i64, Error> {
    UnixMillis::parse(field, text)
        .map(|ms| ms.0)
        .or_else(|err| {
            text.trim()
                .parse::<jiff::Timestamp>()
                .map(|t| t.as_millisecond())
                .map_err(|_| err)
        })
}

/// The layout named by `layout` (a preset or a custom spec), with the epoch
/// and tick overridden where given.
///
/// ```
/// use snowflake_io::resolve_layout;
///
/// let baidu = resolve_layout("time:29,worker:21,sequence:13", Some("1474300800000"), Some("1000"))?;
/// assert_eq!(baidu.tick_ms(), 1000);
/// # Ok::<(), snowflake::Error>(())
/// ```
pub fn resolve_layout(
    layout: &str,
    epoch: Option<&str>,
    tick_ms: Option<&str>,
) -> Result<Layout, Error> {
    let mut resolved = Layout::parse(layout)?;
    if let Some(epoch) = epoch {
        resolved = resolved.with_epoch_ms(parse_time("epoch", epoch)?)?;
    }
    if let Some(tick) = tick_ms {
        let tick = tick.trim().parse::<u64>().map_err(|_| {
            Error::invalid_value(
                "tick_ms",
                tick,
                "a tick is a whole number of milliseconds, at least 1",
            )
        })?;
        resolved = resolved.with_tick_ms(tick)?;
    }
    Ok(resolved)
}

/// Field values by name, each checked against the layout.
///
/// ```
/// use snowflake_io::parse_fields;
///
/// let twitter = snowflake::Layout::twitter();
/// assert_eq!(parse_fields(&twitter, &[("machine", "7")])?, [("machine", 7)]);
/// assert!(parse_fields(&twitter, &[("machine", "32")]).is_err());
/// # Ok::<(), snowflake::Error>(())
/// ```
pub fn parse_fields<'a>(
    layout: &Layout,
    pairs: &[(&'a str, &str)],
) -> Result<Vec<(&'a str, u64)>, Error> {
    pairs
        .iter()
        .map(|(name, text)| Ok((*name, layout.parse_value(name, text)?)))
        .collect()
}

/// Field values written as one text, `NAME=VALUE` pairs separated by commas
/// (`datacenter=1,machine=7`), as `-f` and `SNOWFLAKE_FIELDS` take them,
/// split into the pairs [`parse_fields`] checks by the core's one reader,
/// [`Layout::split_fields`]. Blanks around names and values are dropped; a
/// pair without `=` keeps an empty value, which the layout's parser then
/// refuses naming the field. Empty text is no pairs.
///
/// ```
/// use snowflake_io::{parse_fields, split_fields};
///
/// let twitter = snowflake::Layout::twitter();
/// let pairs = split_fields("datacenter=1, machine=7");
/// assert_eq!(pairs, [("datacenter", "1"), ("machine", "7")]);
/// assert_eq!(parse_fields(&twitter, &pairs)?, [("datacenter", 1), ("machine", 7)]);
/// assert!(split_fields(" ").is_empty());
/// let err = parse_fields(&twitter, &split_fields("machine")).unwrap_err();
/// assert_eq!(err.field(), Some("machine"));
/// # Ok::<(), snowflake::Error>(())
/// ```
pub fn split_fields(text: &str) -> Vec<(&str, &str)> {
    Layout::split_fields(text)
}

/// Whether `layout` asks for every preset at once (`all`, case ignored).
/// The presets are read as they are, so an epoch or tick given with `all`
/// is refused rather than ignored.
///
/// ```
/// use snowflake_io::all_layouts;
///
/// assert!(all_layouts("all", None, None)?);
/// assert!(!all_layouts("discord", Some("0"), None)?);
/// let err = all_layouts("ALL", Some("0"), None).unwrap_err();
/// assert_eq!(err.field(), Some("layout"));
/// # Ok::<(), snowflake::Error>(())
/// ```
pub fn all_layouts(
    layout: &str,
    epoch: Option<&str>,
    tick_ms: Option<&str>,
) -> Result<bool, Error> {
    if !layout.trim().eq_ignore_ascii_case("all") {
        return Ok(false);
    }
    if epoch.is_some() || tick_ms.is_some() {
        return Err(Error::invalid_value(
            "layout",
            "all",
            "all reads the ID under every preset as it is; leave out the epoch and the tick",
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use snowflake::UnixMillis;

    /// An RFC 3339 date in jiff's years, with every choice the grammar
    /// leaves: the separator, a fraction of 0 to 9 digits, a leap second, and
    /// `Z`, `z` or an offset.
    fn rfc3339() -> impl Strategy<Value = String> {
        (
            (0u32..=9999, 1u32..=12, 1u32..=31),
            (
                prop::sample::select(vec!['T', 't', ' ']),
                0u32..24,
                0u32..60,
                0u32..=60,
            ),
            prop::option::of("[0-9]{1,9}"),
            prop_oneof![
                Just("Z".to_string()),
                Just("z".to_string()),
                (prop::sample::select(vec!['+', '-']), 0u32..24, 0u32..60)
                    .prop_map(|(sign, h, m)| format!("{sign}{h:02}:{m:02}")),
            ],
        )
            .prop_map(|((y, mo, d), (sep, h, mi, s), fraction, offset)| {
                let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
                format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{fraction}{offset}")
            })
    }

    proptest! {
        /// The core and jiff read every such date alike: both refuse the
        /// days a month lacks, and both give the same milliseconds.
        #[test]
        fn the_core_reads_rfc3339_as_jiff_does(text in rfc3339()) {
            let jiff = text.parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond());
            let core = UnixMillis::parse_rfc3339(&text).map(|t| t.0);
            // jiff's timestamps end short of 9999's last day (a day's
            // offset either way fits in every date it reads); the core
            // reads every time an i64 holds.
            let past_jiff = |ms: i64| {
                ms < jiff::Timestamp::MIN.as_millisecond() || ms > jiff::Timestamp::MAX.as_millisecond()
            };
            if !(jiff.is_none() && core.is_some_and(past_jiff)) {
                prop_assert_eq!(core, jiff, "{}", text);
            }
        }
    }
}

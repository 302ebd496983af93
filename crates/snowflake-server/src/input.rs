//! Text from the user turned into core values, with the core's errors: the
//! one place the CLI and the HTTP API both parse times, layouts and fields.

use snowflake::{Error, Layout};

/// A time given as Unix milliseconds or as an RFC 3339 date.
pub fn parse_time(field: &'static str, text: &str) -> Result<i64, Error> {
    let text = text.trim();
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    text.parse::<jiff::Timestamp>()
        .map(|t| t.as_millisecond())
        .map_err(|_| Error::invalid_time(field, text))
}

/// The layout named by `layout` (a preset or a custom spec), with the epoch
/// and tick overridden where given.
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
pub fn parse_fields<'a>(
    layout: &Layout,
    pairs: &[(&'a str, &str)],
) -> Result<Vec<(&'a str, u64)>, Error> {
    pairs
        .iter()
        .map(|(name, text)| Ok((*name, layout.parse_value(name, text)?)))
        .collect()
}

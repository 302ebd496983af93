//! `name=value,name=value`: node values as the CLI's `-f` takes them, in
//! `snowflake.fields` and in `compose()`.

use snowflake::{Error, Layout};

/// The values of `text` by field name, each checked against `layout` by
/// the core's parser of a field's value, as the CLI and the API check them.
pub(crate) fn parse<'a>(layout: &Layout, text: &'a str) -> Result<Vec<(&'a str, u64)>, Error> {
    text.split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (name.trim(), value.trim()),
            // Reported by the parser as a missing value for that name.
            None => (pair, ""),
        })
        .map(|(name, value)| Ok((name, layout.parse_value(name, value)?)))
        .collect()
}

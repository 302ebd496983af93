//! `name=value,name=value`: node values as the CLI's `-f` takes them, in
//! `snowflake.fields` and in `compose()`.

use snowflake::{Error, Layout};

/// The values of `text` by field name, read by the core's one reader of
/// this form and each checked against `layout` by the core's parser of a
/// field's value, as the CLI and the API read and check them.
pub(crate) fn parse<'a>(layout: &Layout, text: &'a str) -> Result<Vec<(&'a str, u64)>, Error> {
    Layout::split_fields(text)
        .into_iter()
        .map(|(name, value)| Ok((name, layout.parse_value(name, value)?)))
        .collect()
}

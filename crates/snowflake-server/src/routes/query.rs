//! Query parameters, declared once per route as a struct: its fields are
//! what the handler reads, and (through `IntoParams`) what the OpenAPI
//! document lists and what the route accepts, so nothing names a
//! parameter twice. Each is given once, only the ones a route takes, and
//! all stay text until the core's parsers read them, so the API and the
//! CLI report bad input in the same words.
//!
//! What a parameter allows is stated in the document as tightly as the
//! service checks it (schemathesis draws requests from it): the lists the
//! core holds (the presets, the text forms, the default layout's fields)
//! are read from the core.

use std::collections::BTreeSet;

use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequestParts, Query as Pairs};
use axum::http::request::Parts;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use snowflake::{Layout, TextForm};
use snowflake_io::{all_layouts, resolve_layout};
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{Object, ObjectBuilder, Required, Type};

use crate::problem::Problem;

/// A route's query parameters: their names come from the document's own
/// description of them.
pub(crate) trait QuerySet: IntoParams + DeserializeOwned + Default + Send {
    /// Whether the route also takes parameters it cannot name in advance
    /// (compose: each field of the layout asked for is a parameter).
    const OPEN: bool = false;

    /// The parameters' names, as the document lists them.
    fn names() -> &'static [String];
}

/// Makes a struct of query parameters from parts that derive
/// `IntoParams`: its parameters are theirs, in order. `open NAME` adds a
/// field that takes every other parameter, by name: the values of the
/// layout's fields, which the document shows as the default layout's.
/// `query_set!(@single T)` makes a struct that derives `IntoParams` itself
/// a route's whole query.
macro_rules! query_set {
    ($(#[$doc:meta])* $name:ident { $($part:ident: $ty:ty),+ $(,)? } $(open $rest:ident)?) => {
        $(#[$doc])*
        #[derive(Debug, Default, serde::Deserialize)]
        pub(crate) struct $name {
            $(#[serde(flatten)] pub(crate) $part: $ty,)+
            $(#[serde(flatten)] pub(crate) $rest: std::collections::BTreeMap<String, String>,)?
        }

        impl utoipa::IntoParams for $name {
            fn into_params(
                parameter_in: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
            ) -> Vec<utoipa::openapi::path::Parameter> {
                let mut params = Vec::new();
                $(params.extend(<$ty as utoipa::IntoParams>::into_params(&parameter_in));)+
                $($crate::routes::query::query_set!(@fields params $rest);)?
                params
            }
        }

        $crate::routes::query::query_set!(@names $name $($rest)?);
    };
    (@fields $params:ident $rest:ident) => {
        $params.extend($crate::routes::query::field_params())
    };
    (@names $name:ident) => {
        $crate::routes::query::query_set!(@impl $name false);
    };
    (@names $name:ident $rest:ident) => {
        $crate::routes::query::query_set!(@impl $name true);
    };
    (@impl $name:ident $open:literal) => {
        impl $crate::routes::query::QuerySet for $name {
            const OPEN: bool = $open;

            fn names() -> &'static [String] {
                static NAMES: std::sync::LazyLock<Vec<String>> =
                    std::sync::LazyLock::new($crate::routes::query::names_of::<$name>);
                &NAMES
            }
        }
    };
    (@single $name:ident) => {
        $crate::routes::query::query_set!(@impl $name false);
    };
}
pub(crate) use query_set;

/// The names of `T`'s parameters.
pub(crate) fn names_of<T: IntoParams>() -> Vec<String> {
    T::into_params(|| Some(ParameterIn::Query))
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// A route's query parameters, as a handler's argument. A malformed query,
/// a parameter given twice (an error, as in the CLI, rather than silently
/// the last one) or one the route does not take is refused with a problem
/// naming it.
pub(crate) struct Query<T>(pub(crate) T);

impl<T: QuerySet, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        // No query, as on most requests for one ID: nothing to decode, so
        // no deserializer runs.
        if parts.uri.query().is_none_or(str::is_empty) {
            return Ok(Query(T::default()));
        }
        check::<T>(Pairs::try_from_uri(&parts.uri))?;
        let Pairs(query) = Pairs::try_from_uri(&parts.uri).map_err(malformed)?;
        Ok(Query(query))
    }
}

fn malformed(err: QueryRejection) -> Problem {
    Problem::bad_request("query", format!("the query string is malformed: {err}"))
}

/// Refuses a query that gives a parameter twice, or one `T` does not take.
fn check<T: QuerySet>(
    query: Result<Pairs<Vec<(String, String)>>, QueryRejection>,
) -> Result<(), Problem> {
    let Pairs(pairs) = query.map_err(malformed)?;
    let names = T::names();
    let mut seen = BTreeSet::new();
    for (name, _) in &pairs {
        if !seen.insert(name) {
            let detail = format!("{name} is given more than once; give each parameter once");
            return Err(Problem::bad_request(name, detail));
        }
        if !T::OPEN && !names.contains(name) {
            let detail = format!(
                "this route takes no parameter {name:?}; it takes {}",
                names.join(", ")
            );
            return Err(Problem::bad_request(name, detail));
        }
    }
    Ok(())
}

/// The text of an optional parameter, as the core's parsers take it.
fn text(param: &Option<String>) -> Option<&str> {
    param.as_deref()
}

/// `{id}`: the ID a route reads, from its path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct IdPath {
    /// decimal or 0x hexadecimal, or in the text form `format` names
    #[param(
        pattern = "^[1-9][0-9]{0,17}$|^0x[0-9a-f]{1,15}$",
        example = "1541815603606036480"
    )]
    pub(crate) id: String,
}

/// `layout`, `epoch`, `tick_ms`: the layout IDs are read or made in.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LayoutQuery {
    /// preset name or custom layout such as time:41,datacenter:5,machine:5,sequence:12
    #[param(value_type = Option<LayoutName>, inline, example = default_layout)]
    layout: Option<String>,
    /// override the layout's epoch (Unix ms or RFC 3339)
    #[param(pattern = "^1[0-2][0-9]{11}$", example = "1288834974657")]
    epoch: Option<String>,
    /// override the layout's tick, in milliseconds
    #[param(pattern = "^[1-9][0-9]{0,3}$", example = "1")]
    tick_ms: Option<String>,
}

impl LayoutQuery {
    /// The layout asked for (the default one when none is named), checked
    /// by the core's parsers.
    pub(crate) fn layout(&self) -> Result<Layout, Problem> {
        let default = Layout::default();
        let name = text(&self.layout).map_or(default.name(), Into::into);
        Ok(resolve_layout(
            &name,
            text(&self.epoch),
            text(&self.tick_ms),
        )?)
    }
}

/// `layout` (which may be `all`), `epoch`, `tick_ms`: how one ID is read.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ReadingQuery {
    /// preset name or custom layout; `all` for every preset at once
    #[param(value_type = Option<LayoutOrAll>, inline, example = default_layout)]
    layout: Option<String>,
    /// override the layout's epoch (Unix ms or RFC 3339)
    #[param(pattern = "^1[0-2][0-9]{11}$", example = "1288834974657")]
    epoch: Option<String>,
    /// override the layout's tick, in milliseconds
    #[param(pattern = "^[1-9][0-9]{0,3}$", example = "1")]
    tick_ms: Option<String>,
}

impl ReadingQuery {
    /// `None` for every preset at once (`layout=all`), else the layout asked
    /// for, checked by the core's parsers.
    pub(crate) fn layout(&self) -> Result<Option<Layout>, Problem> {
        let (epoch, tick_ms) = (text(&self.epoch), text(&self.tick_ms));
        if all_layouts(text(&self.layout).unwrap_or(""), epoch, tick_ms)? {
            return Ok(None);
        }
        let default = Layout::default();
        let name = text(&self.layout).map_or(default.name(), Into::into);
        Ok(Some(resolve_layout(&name, epoch, tick_ms)?))
    }
}

/// `format`: the text form IDs are read in.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FormQuery {
    /// read IDs in this text form; without it, decimal or 0x hex (a CSV
    /// answer writes its id column in it)
    #[param(value_type = Option<FormName>, inline, example = default_form)]
    format: Option<String>,
}

impl FormQuery {
    /// The text form named, checked by the core's parser.
    pub(crate) fn form(&self) -> Result<Option<TextForm>, Problem> {
        text_form(&self.format)
    }
}

/// The text form a `format` parameter names, checked by the core's parser.
pub(crate) fn text_form(format: &Option<String>) -> Result<Option<TextForm>, Problem> {
    Ok(text(format).map(str::parse).transpose()?)
}

query_set!(@single FormQuery);

/// The default layout's name: the example of every `layout`.
fn default_layout() -> String {
    Layout::default().name().into_owned()
}

/// The default text form's name: the example of every `format`.
pub(crate) fn default_form() -> &'static str {
    TextForm::ALL[0].name()
}

/// A string parameter matching `pattern`.
fn pattern(pattern: impl Into<String>) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .build()
}

/// A preset's name, or a custom layout of the shape the default one has.
fn layout_pattern(all: bool) -> String {
    let presets = Layout::PRESETS.join("|");
    let all = if all { "|all" } else { "" };
    format!("^({presets}{all})$|^time:4[01](,[a-z]{{1,10}}:[1-5]){{0,2}},sequence:1[0-2]$")
}

/// Declares a parameter's type for the document by the schema `$make`
/// returns.
macro_rules! param_type {
    ($(#[$doc:meta])* $name:ident = $make:expr) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $make.into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

pub(crate) use param_type;

param_type! {
    /// A preset's name or a custom layout.
    LayoutName = pattern(layout_pattern(false))
}

param_type! {
    /// A preset's name, a custom layout, or `all`.
    LayoutOrAll = pattern(layout_pattern(true))
}

param_type! {
    /// One of the core's text forms, by name.
    FormName = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(TextForm::NAMES))
        .build()
}

/// Unix milliseconds from 2011 to 2033, or an RFC 3339 time in UTC from
/// 2010 to 2079: times the default layout holds.
const TIME: &str = "^1[3-9][0-9]{11}$|^20([1-7][0-9])-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{3})?Z$";

param_type! {
    /// A time: Unix milliseconds or RFC 3339.
    Time = pattern(TIME)
}

/// The default layout's fields as parameters of compose, each from 0 to
/// its largest value: what a layout's fields look like in the document,
/// since a custom layout names its own.
pub(crate) fn field_params() -> Vec<Parameter> {
    Layout::default()
        .fields()
        .iter()
        .map(|field| {
            ParameterBuilder::new()
                .name(field.name())
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(format!(
                    "the {} field's value; every field of the layout is a parameter of its name",
                    field.name()
                )))
                .schema(Some(pattern(format!("^({})$", up_to(field.max())))))
                .example(Some(json!("1")))
                .build()
        })
        .collect()
}

/// A regular expression of the decimal numbers from 0 to `max`, without
/// leading zeros.
fn up_to(max: u64) -> String {
    let digits = max.to_string();
    let len = digits.len();
    let class = |low: u8, high: u8| match high - low {
        0 => (low as char).to_string(),
        _ => format!("[{}-{}]", low as char, high as char),
    };
    if len == 1 {
        return class(b'0', digits.as_bytes()[0]);
    }
    // Every number of fewer digits than `max`.
    let mut alternatives = vec![class(b'0', b'9')];
    for n in 2..len {
        alternatives.push(format!("[1-9][0-9]{{{}}}", n - 1));
    }
    // Those of as many digits: the same as `max` up to a place, less there
    // (but never a leading 0), anything after; and `max` itself.
    for (i, &digit) in digits.as_bytes().iter().enumerate() {
        let low = if i == 0 { b'1' } else { b'0' };
        if digit > low {
            let rest = match len - i - 1 {
                0 => String::new(),
                n => format!("[0-9]{{{n}}}"),
            };
            alternatives.push(format!("{}{}{rest}", &digits[..i], class(low, digit - 1)));
        }
    }
    alternatives.push(digits);
    alternatives.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression matches exactly 0 to `max`, written without leading
    /// zeros.
    #[test]
    fn up_to_matches_exactly_the_numbers_up_to_max() {
        for max in [
            0, 1, 7, 9, 10, 11, 19, 20, 31, 99, 100, 255, 1023, 4095, 9999,
        ] {
            let re = format!("^({})$", up_to(max));
            let matches = |text: &str| simple_match(&re, text);
            for n in 0..=(max + 200) {
                assert_eq!(matches(&n.to_string()), n <= max, "{re} on {n}");
            }
            assert!(!matches("01"), "{re} takes a leading zero");
        }
    }

    /// Enough of a regular expression engine for what [`up_to`] writes:
    /// alternatives of literals, classes and counted repeats.
    fn simple_match(re: &str, text: &str) -> bool {
        let body = re.trim_start_matches("^(").trim_end_matches(")$");
        body.split('|')
            .any(|alt| matches_alt(alt.as_bytes(), text.as_bytes()))
    }

    fn matches_alt(alt: &[u8], text: &[u8]) -> bool {
        let mut units: Vec<(u8, u8)> = Vec::new();
        let mut i = 0;
        while i < alt.len() {
            match alt[i] {
                b'[' => {
                    units.push((alt[i + 1], alt[i + 3]));
                    i += 5;
                }
                b'{' => {
                    let end = i + alt[i..].iter().position(|&c| c == b'}').unwrap();
                    let n: usize = std::str::from_utf8(&alt[i + 1..end])
                        .unwrap()
                        .parse()
                        .unwrap();
                    let last = *units.last().unwrap();
                    units.extend(std::iter::repeat_n(last, n - 1));
                    i = end + 1;
                }
                c => {
                    units.push((c, c));
                    i += 1;
                }
            }
        }
        units.len() == text.len()
            && units
                .iter()
                .zip(text)
                .all(|(&(lo, hi), &c)| (lo..=hi).contains(&c))
    }
}

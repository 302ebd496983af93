//! Query parameters as the API routes read them: each given once, only the
//! ones a route takes, and the layout and text form among them parsed by the
//! core's parsers.

use std::collections::BTreeMap;

use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use snowflake::{Layout, TextForm};

use crate::problem::Problem;
use snowflake_io::resolve_layout;

/// Parameters by name.
pub type Params = BTreeMap<String, String>;

/// The query's parameters; one given twice is an error, as in the CLI,
/// rather than silently the last one.
fn params(query: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Result<Params, Problem> {
    let Query(pairs) = query.map_err(|err| {
        Problem::bad_request("query", format!("the query string is malformed: {err}"))
    })?;
    let mut params = Params::new();
    for (name, value) in pairs {
        if params.contains_key(&name) {
            let detail = format!("{name} is given more than once; give each parameter once");
            return Err(Problem::bad_request(&name, detail));
        }
        params.insert(name, value);
    }
    Ok(params)
}

/// The query's parameters, as a handler's argument; a malformed query or a
/// parameter given twice is refused with a problem naming it.
pub struct QueryParams(pub Params);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        // No query, as on most requests for one ID: nothing to decode, so
        // the deserializer is not run.
        if parts.uri.query().is_none_or(str::is_empty) {
            return Ok(QueryParams(Params::new()));
        }
        params(Query::try_from_uri(&parts.uri)).map(QueryParams)
    }
}

/// Refuses parameters a route does not take, instead of ignoring them.
pub fn only(params: &Params, allowed: &[&str]) -> Result<(), Problem> {
    match params.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(name) => Err(Problem::bad_request(
            name,
            format!(
                "this route takes no parameter {name:?}; it takes {}",
                allowed.join(", ")
            ),
        )),
    }
}

pub fn layout_of(params: &Params) -> Result<Layout, Problem> {
    Ok(resolve_layout(
        params.get("layout").map_or("twitter", String::as_str),
        params.get("epoch").map(String::as_str),
        params.get("tick_ms").map(String::as_str),
    )?)
}

/// `format=`: a text form by name, checked by the core's parser.
pub fn text_form(params: &Params) -> Result<Option<TextForm>, Problem> {
    Ok(params
        .get("format")
        .map(|name| name.parse::<TextForm>())
        .transpose()?)
}

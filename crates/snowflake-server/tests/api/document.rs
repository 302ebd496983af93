//! The OpenAPI document against what the service does: every route takes
//! exactly the query parameters the document lists for it, and what the
//! core writes (and the routes answer) has exactly the shape of its schema,
//! property by property, so that a field the core adds or renames and the
//! document does not fails here.

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use snowflake::{Id, Layout, Readings};
use snowflake_io::BadRecord;

use crate::support::*;

/// The parameter no route takes.
const STRANGER: &str = "zz_stranger";

/// The document's query parameters of one operation, and the query that
/// gives each required one its example.
fn query_params(operation: &Value) -> (Vec<String>, String) {
    let mut names = Vec::new();
    let mut required = Vec::new();
    for p in operation["parameters"].as_array().into_iter().flatten() {
        if p["in"] != "query" {
            continue;
        }
        let name = p["name"].as_str().unwrap().to_string();
        if p["required"] == true {
            required.push(format!("{name}={}", p["example"].as_str().unwrap()));
        }
        names.push(name);
    }
    (names, required.join("&"))
}

/// A parameter a route does not take is refused, and the refusal lists
/// exactly the parameters the document gives for the route: the route's
/// query struct and the document's list are one. A route the document
/// gives no query parameter reads no query, as before; compose takes any
/// name as a field of its layout, which the core then refuses.
#[tokio::test]
async fn every_route_takes_exactly_the_parameters_its_document_lists() {
    let doc = get("/api/v1/openapi.json").await.json();
    let mut checked = 0;
    for (path, operations) in doc["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let (names, required) = query_params(operation);
            let path_only = path.replace("{id}", "4194439168");
            let uri = format!("{path_only}?{required}&{STRANGER}=1");
            let request = Request::builder()
                .method(Method::from_bytes(method.to_uppercase().as_bytes()).unwrap())
                .uri(&uri)
                .header("content-type", "text/plain")
                .body(Body::from("4194439168"))
                .unwrap();
            let reply = send_with(&config(), request).await;
            let what = format!("{method} {uri}");
            if names.is_empty() {
                assert!(reply.status.is_success(), "{what}: {}", reply.text());
                continue;
            }
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{what}");
            let problem = reply.json();
            if path == "/api/v1/compose" {
                assert!(
                    problem["detail"].as_str().unwrap().contains(STRANGER),
                    "{what}: {problem}"
                );
            } else {
                assert_eq!(problem["field"], STRANGER, "{what}");
                let detail = format!(
                    "this route takes no parameter \"{STRANGER}\"; it takes {}",
                    names.join(", ")
                );
                assert_eq!(problem["detail"], detail, "{what}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} routes take parameters");
}

/// Each parameter given twice is refused, naming it, on every route that
/// reads a query.
#[tokio::test]
async fn a_parameter_given_twice_is_refused_on_every_route() {
    let doc = get("/api/v1/openapi.json").await.json();
    for (path, operations) in doc["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let (names, required) = query_params(operation);
            let Some(name) = names.first() else {
                continue;
            };
            let uri = format!(
                "{}?{required}&{name}=1&{name}=1",
                path.replace("{id}", "4194439168")
            );
            let request = Request::builder()
                .method(Method::from_bytes(method.to_uppercase().as_bytes()).unwrap())
                .uri(&uri)
                .body(Body::empty())
                .unwrap();
            let reply = send_with(&config(), request).await;
            assert_problem(
                &reply,
                StatusCode::BAD_REQUEST,
                Some(name),
                &format!("{name} is given more than once"),
            );
        }
    }
}

/// Where a value does not have the shape `schema` gives it: `None` if it
/// does. Objects must carry exactly the schema's properties, every one of
/// them required (the core writes a missing value as null, never leaves
/// the key out); `oneOf` takes exactly one alternative.
fn mismatch(doc: &Value, value: &Value, schema: &Value, at: &str) -> Option<String> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/components/schemas/");
        let target = &doc["components"]["schemas"][name];
        assert!(!target.is_null(), "{at}: no schema {name}");
        return mismatch(doc, value, target, &format!("{at} ({name})"));
    }
    if let Some(alternatives) = schema["oneOf"].as_array() {
        let misses: Vec<String> = alternatives
            .iter()
            .filter_map(|alt| mismatch(doc, value, alt, at))
            .collect();
        return match alternatives.len() - misses.len() {
            1 => None,
            0 => Some(format!("{at}: no alternative fits: {}", misses.join("; "))),
            n => Some(format!("{at}: {n} alternatives fit {value}")),
        };
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => return Some(format!("{at}: a schema without a type: {schema}")),
    };
    let fits = match value {
        Value::Null => types.contains(&"null"),
        Value::Bool(_) => types.contains(&"boolean"),
        Value::Number(n) => {
            let integer = n.is_i64() || n.is_u64();
            let above = schema["minimum"]
                .as_f64()
                .is_none_or(|min| n.as_f64().unwrap() >= min);
            (types.contains(&"number") || (integer && types.contains(&"integer"))) && above
        }
        Value::String(_) => types.contains(&"string"),
        Value::Array(items) => {
            return match types.contains(&"array") {
                false => Some(format!("{at}: {value} is not {types:?}")),
                true => array_mismatch(doc, items, schema, at),
            };
        }
        Value::Object(object) => {
            return match types.contains(&"object") {
                false => Some(format!("{at}: {value} is not {types:?}")),
                true => object_mismatch(doc, object, schema, at),
            };
        }
    };
    (!fits).then(|| format!("{at}: {value} is not {types:?} ({schema})"))
}

fn array_mismatch(doc: &Value, items: &[Value], schema: &Value, at: &str) -> Option<String> {
    if let Some(tuple) = schema["prefixItems"].as_array() {
        if tuple.len() != items.len() {
            return Some(format!(
                "{at}: {} items where the tuple has {}",
                items.len(),
                tuple.len()
            ));
        }
        return tuple
            .iter()
            .zip(items)
            .enumerate()
            .find_map(|(i, (s, v))| mismatch(doc, v, s, &format!("{at}[{i}]")));
    }
    items
        .iter()
        .enumerate()
        .find_map(|(i, v)| mismatch(doc, v, &schema["items"], &format!("{at}[{i}]")))
}

fn object_mismatch(
    doc: &Value,
    object: &serde_json::Map<String, Value>,
    schema: &Value,
    at: &str,
) -> Option<String> {
    let Some(properties) = schema["properties"].as_object() else {
        // A map: every value of one schema.
        let values = &schema["additionalProperties"];
        return object
            .iter()
            .find_map(|(k, v)| mismatch(doc, v, values, &format!("{at}.{k}")));
    };
    let written: BTreeSet<&str> = object.keys().map(String::as_str).collect();
    let described: BTreeSet<&str> = properties.keys().map(String::as_str).collect();
    if written != described {
        return Some(format!(
            "{at}: written {written:?}, described {described:?}"
        ));
    }
    let required: BTreeSet<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if required != described {
        return Some(format!(
            "{at}: always written {described:?}, required {required:?}"
        ));
    }
    object
        .iter()
        .find_map(|(k, v)| mismatch(doc, v, &properties[k], &format!("{at}.{k}")))
}

/// A value as the core's `serde` impls write it.
fn json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

/// Checks `value` against the component `name` of `doc`.
fn assert_fits(doc: &Value, name: &str, value: &Value) {
    let schema = serde_json::json!({ "$ref": format!("#/components/schemas/{name}") });
    if let Some(why) = mismatch(doc, value, &schema, name) {
        panic!("{why}");
    }
}

/// What the core writes, value by value, has the shape of its schema in
/// the served document.
#[tokio::test]
async fn what_the_core_writes_fits_the_document() {
    let doc = get("/api/v1/openapi.json").await.json();
    let presets = Layout::presets();
    // A tweet's ID: possible under twitter, in the future under discord,
    // impossible in js53's 53 bits.
    let id = Id::new(1541815603606036480);
    let small = Id::new(4194439168);
    for layout in &presets {
        assert_fits(&doc, "Layout", &json(layout));
        assert_fits(&doc, "Decoded", &json(&layout.decode(small).unwrap()));
        let bounds = layout.bounds(1_704_067_200_000, 1_706_745_599_999);
        if let Ok(bounds) = bounds {
            assert_fits(&doc, "Bounds", &json(&bounds));
        }
    }
    let readings = Readings::new(&presets, id, 1_704_067_200_000);
    let verdicts: BTreeSet<&str> = readings
        .readings()
        .iter()
        .map(|r| r.verdict().name())
        .collect();
    assert_eq!(
        verdicts.len(),
        3,
        "every verdict, so every shape: {verdicts:?}"
    );
    assert_fits(&doc, "Readings", &json(&readings));
    assert_fits(&doc, "DecodeAnswer", &json(&readings));
    let err = Id::parse("nope").unwrap_err();
    let bad = BadRecord {
        line: 2,
        input: "nope",
        error: err.to_string(),
        field: err.field(),
    };
    assert_fits(&doc, "BadRecord", &json(&bad));
    assert_fits(&doc, "BulkItem", &json(&bad));
}

/// The routes' own answers have the shapes the document gives them.
#[tokio::test]
async fn the_answers_fit_the_document() {
    let doc = get("/api/v1/openapi.json").await.json();
    let fits = |name: &str, reply: &Reply| {
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_fits(&doc, name, &reply.json());
    };
    for layout in get("/api/v1/layouts").await.json().as_array().unwrap() {
        assert_fits(&doc, "Layout", layout);
        let name = layout["name"].as_str().unwrap();
        let decoded = get(&format!("/api/v1/decode/4194439168?layout={name}")).await;
        fits("DecodeAnswer", &decoded);
        fits("Decoded", &decoded);
    }
    fits(
        "Readings",
        &get("/api/v1/decode/1541815603606036480?layout=all").await,
    );
    fits("Decoded", &get("/api/v1/compose?machine=3").await);
    fits(
        "Bounds",
        &get("/api/v1/bounds?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z").await,
    );
    fits("Ids", &get("/api/v1/ids?count=3").await);
    fits("Status", &get("/healthz").await);
    let bulk = post(
        "/api/v1/decode",
        "text/plain",
        "application/json",
        "4194439168\nnope\n",
    )
    .await;
    assert_eq!(bulk.status, StatusCode::OK);
    for item in bulk.json().as_array().unwrap() {
        assert_fits(&doc, "BulkItem", item);
    }
}

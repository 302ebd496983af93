//! Reading IDs: compose, decode under one layout or every preset, bounds,
//! the layouts list, and the text forms an ID can be written in.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use snowflake::Layout;
use snowflake_server::{Standalone, app};
use tower::ServiceExt;

use crate::support::*;

#[tokio::test]
async fn compose_worked_example_is_the_cli_json() {
    let reply =
        get("/api/v1/compose?timestamp=1288834975657&datacenter=1&machine=1&sequence=0").await;
    assert_eq!(reply.status, StatusCode::OK);
    let twitter = Layout::twitter();
    let expected = serde_json::to_value(twitter.decode(4194439168.into()).unwrap()).unwrap();
    assert_eq!(reply.json(), expected);
}

#[tokio::test]
async fn compose_follows_the_layout_and_defaults_to_now() {
    let reply = get(
        "/api/v1/compose?layout=discord&timestamp=1462015105796&worker=1&process=0&increment=7",
    )
    .await;
    assert_eq!(reply.json()["id"], "175928847299117063");
    let reply = get("/api/v1/compose?machine=3").await;
    let ts = reply.json()["timestamp_ms"].as_i64().unwrap();
    let now = snowflake::Clock::now_ms(&snowflake::SystemClock);
    assert!((now - ts).abs() < 60_000);
    // An empty parameter, as an empty form field sends, means 0.
    let reply = get("/api/v1/compose?timestamp=1288834975657&machine=&datacenter=1").await;
    assert_eq!(reply.json()["fields"]["machine"], 0);
}

#[tokio::test]
async fn compose_errors_name_the_field() {
    let cases = [
        (
            "/api/v1/compose?machine=32",
            "machine",
            "machine 32 is out of range: 0 to 31 (5 bits)",
        ),
        (
            "/api/v1/compose?machine=-1",
            "machine",
            "machine -1 is out of range: 0 to 31",
        ),
        (
            "/api/v1/compose?datacenter=x",
            "datacenter",
            "is not a whole number",
        ),
        (
            "/api/v1/compose?worker=1",
            "worker",
            "its fields are datacenter, machine, sequence",
        ),
        (
            "/api/v1/compose?timestamp=1288834974656",
            "timestamp",
            "before the layout's epoch",
        ),
        (
            "/api/v1/compose?timestamp=3487858230209",
            "timestamp",
            "2080-07-10T17:30:30.208Z",
        ),
        (
            "/api/v1/compose?timestamp=soon",
            "timestamp",
            "is not a time",
        ),
        ("/api/v1/compose?layout=flickr", "layout", "unknown layout"),
        (
            "/api/v1/compose?layout=time:41,x:30",
            "layout",
            "add up to 71 bits; an ID holds at most 64",
        ),
        (
            "/api/v1/compose?tick_ms=0",
            "tick_ms",
            "tick_ms 0 is not allowed",
        ),
    ];
    assert_all_refused(&cases).await;
}

#[tokio::test]
async fn parameters_given_twice_or_not_taken_are_refused() {
    assert_all_refused(&[
        // As the CLI refuses a field given twice.
        (
            "/api/v1/compose?machine=1&machine=2",
            "machine",
            "given more than once",
        ),
        (
            "/api/v1/ids?layout=discord",
            "layout",
            "takes no parameter \"layout\"; it takes count",
        ),
        (
            "/api/v1/decode/1?machine=1",
            "machine",
            "takes no parameter",
        ),
    ])
    .await;
}

#[tokio::test]
async fn decode_and_its_errors() {
    let reply = get("/api/v1/decode/1541815603606036480").await;
    let v = reply.json();
    assert_eq!(v["time"], "2022-06-28T16:07:40.105Z");
    assert_eq!(v["fields"]["machine"], 26);
    let reply = get("/api/v1/decode/175928847299117063?layout=discord").await;
    assert_eq!(reply.json()["timestamp_ms"], 1462015105796i64);
    assert_eq!(
        get("/api/v1/decode/0xfa021000").await.json()["id"],
        "4194439168"
    );
    for (id, detail) in [
        ("18446744073709551616", "does not fit in 64 bits"),
        ("9223372036854775808", "sign bit"),
        ("abc", "id \"abc\" is not decimal: 'a' is not allowed"),
    ] {
        let reply = get(&format!("/api/v1/decode/{id}")).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, Some("id"), detail);
    }
}

#[tokio::test]
async fn bounds_and_layouts() {
    let v = get("/api/v1/bounds?from=2010-11-04T01:42:55.657Z&to=1288834975657")
        .await
        .json();
    assert_eq!(v["first"], (1000u64 << 22).to_string());
    assert_eq!(v["last"], ((1000u64 << 22) | ((1 << 22) - 1)).to_string());
    assert_problem(
        &get("/api/v1/bounds?to=1").await,
        StatusCode::BAD_REQUEST,
        Some("from"),
        "from is required",
    );
    assert_problem(
        &get("/api/v1/bounds?from=2&to=1").await,
        StatusCode::BAD_REQUEST,
        Some("from"),
        "is after to",
    );
    let layouts = get("/api/v1/layouts").await.json();
    let names: Vec<&str> = layouts
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    // The presets the shared vectors list, in their order: what is typed
    // again there is the independent word on the core's table.
    let vectors = vectors();
    let listed: Vec<&str> = vectors["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, listed);
    let js53 = &layouts[names.iter().position(|n| *n == "js53").unwrap()];
    assert_eq!(
        (
            &js53["bits"],
            &js53["js_safe"],
            &js53["max_id"],
            &js53["epoch_ms"]
        ),
        (
            &Value::from(53),
            &Value::from(true),
            &Value::from("9007199254740991"),
            &Value::from(1704067200000i64)
        )
    );
    assert_eq!(layouts[1]["js_safe"], false);
}

#[tokio::test]
async fn text_forms_in_breakdowns_and_on_the_ids_and_decode_routes() {
    use snowflake::{Id, TextForm};
    let v = get("/api/v1/decode/4194439168").await.json();
    assert_eq!(
        v["text"],
        serde_json::json!({"hex": "0xfa021000", "base32": "0000003X04400", "base62": "000004ZrREe", "base58": "7Pebdh"})
    );
    let v = get("/api/v1/decode/000004ZrREe?format=base62").await.json();
    assert_eq!(v["id"], "4194439168");
    assert_problem(
        &get("/api/v1/decode/1?format=base64").await,
        StatusCode::BAD_REQUEST,
        Some("format"),
        "format base64 is not allowed; a text form is decimal, hex, base32, base62 or base58",
    );
    let reply = send_with(
        &config(),
        Request::post("/api/v1/ids?count=50&format=base32")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    let ids: Vec<String> = reply.json()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 50);
    for pair in ids.windows(2) {
        assert_eq!(pair[0].len(), 13);
        assert!(pair[0] < pair[1], "{pair:?}");
        let (a, b) = (
            TextForm::Base32.parse(&pair[0]).unwrap(),
            TextForm::Base32.parse(&pair[1]).unwrap(),
        );
        assert!(a < b);
    }
    let request = Request::post("/api/v1/ids?count=3&format=base58")
        .header(header::ACCEPT, "text/plain")
        .body(Body::empty())
        .unwrap();
    let text = send_with(&config(), request).await.text();
    for line in text.lines() {
        let id: Id = TextForm::Base58.parse(line).unwrap();
        assert_eq!(id.to_text(TextForm::Base58), line);
    }
    assert_eq!(text.lines().count(), 3);
}

#[tokio::test]
async fn layout_all_reads_an_id_under_every_preset_against_the_servers_clock() {
    // The service's clock, not the machine's, decides what is the future.
    let clock = Arc::new(snowflake::ManualClock::new(1_735_689_600_000)); // 2025-01-01
    let router = app(Standalone::new(generator_on(clock)), &config());
    let request = Request::get("/api/v1/decode/175928847299117063?layout=all")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["now"], "2025-01-01T00:00:00.000Z");
    let verdicts: Vec<(&str, &str)> = v["readings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["layout"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts.len(), snowflake::Layout::PRESETS.len());
    assert!(verdicts.contains(&("discord", "possible")));
    assert!(verdicts.contains(&("js53", "impossible")));
    let discord = v["readings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["layout"] == "discord")
        .unwrap();
    assert_eq!(discord["platform"], "Discord");
    assert_eq!(discord["decoded"]["time"], "2016-04-30T11:18:25.796Z");

    assert_problem(
        &get("/api/v1/decode/1?layout=all&epoch=0").await,
        StatusCode::BAD_REQUEST,
        Some("layout"),
        "all reads the ID under every preset as it is; leave out the epoch and the tick",
    );
    // The ID in another text form, read under every preset too.
    let v = get("/api/v1/decode/000004ZrREe?layout=ALL&format=base62")
        .await
        .json();
    assert_eq!(v["id"], "4194439168");
    assert_eq!(
        v["readings"].as_array().unwrap().len(),
        snowflake::Layout::PRESETS.len()
    );
}

/// Every reading case of the shared vectors, through the API on a clock at
/// the case's now: each preset's verdict, time and reason as the vectors
/// say, in the vectors' order.
#[tokio::test]
async fn layout_all_gives_the_vectors_readings() {
    let vectors = vectors();
    let cases = vectors["readings"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let now = case["now_ms"].as_i64().unwrap();
        let clock = Arc::new(snowflake::ManualClock::new(now));
        let router = app(Standalone::new(generator_on(clock)), &config());
        let id = case["id"].as_str().unwrap();
        let (status, body) = get_from(&router, &format!("/api/v1/decode/{id}?layout=all")).await;
        assert_eq!(status, StatusCode::OK, "{id}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        // Each reading's layout, verdict and time, wherever its time is.
        let triples = |readings: &Value, time: fn(&Value) -> &Value| -> Vec<[Value; 3]> {
            let readings = readings.as_array().unwrap().iter();
            readings
                .map(|r| [r["layout"].clone(), r["verdict"].clone(), time(r).clone()])
                .collect()
        };
        let got = triples(&v["readings"], |r| &r["decoded"]["timestamp_ms"]);
        let expected = triples(&case["readings"], |r| &r["timestamp_ms"]);
        assert_eq!(got, expected, "{}: {}", case["note"], id);
    }
}

//! `POST /api/v1/decode`: many IDs in one body, one record each in JSON,
//! NDJSON or CSV, and the bodies it refuses.

use axum::http::StatusCode;
use serde_json::Value;
use snowflake::Layout;

use crate::support::*;

#[tokio::test]
async fn bulk_decode_answers_each_id_in_the_format_asked_for() {
    let twitter = Layout::twitter();
    let good = twitter.decode(1541815603606036480.into()).unwrap();
    let expected_good = serde_json::to_value(good).unwrap();

    // A JSON array in, a JSON array out, one record per ID, in order.
    let reply = post(
        "/api/v1/decode",
        "application/json",
        "application/json",
        r#"["1541815603606036480", "12ab", " 0xfa021000 ", "9223372036854775808"]"#,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.content_type, "application/json");
    let items = reply.json();
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0], expected_good);
    assert_eq!(items[1]["line"], 2);
    assert_eq!(items[1]["input"], "12ab");
    assert_eq!(items[1]["field"], "id");
    assert!(
        items[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("id \"12ab\" is not decimal")
    );
    assert_eq!(items[2]["id"], "4194439168");
    assert!(items[3]["error"].as_str().unwrap().contains("sign bit"));

    // Text in, NDJSON out.
    let reply = post(
        "/api/v1/decode?layout=discord",
        "text/plain",
        "application/x-ndjson",
        "175928847299117063\n\nnope 0x10\n",
    )
    .await;
    assert_eq!(reply.content_type, "application/x-ndjson");
    let lines: Vec<Value> = reply
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["timestamp_ms"], 1462015105796i64);
    assert_eq!(lines[1]["line"], 3);
    assert_eq!(lines[2]["id"], "16");

    // CSV, with the IDs read and written in base62.
    let id = snowflake::Id::new(1541815603606036480).to_text(snowflake::TextForm::Base62);
    let reply = post(
        "/api/v1/decode?format=base62",
        "text/plain",
        "text/csv",
        format!("{id}\n!\n"),
    )
    .await;
    assert_eq!(reply.content_type, "text/csv; charset=utf-8");
    let text = reply.text();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(
        rows[0],
        "line,id,timestamp_ms,time,datacenter,machine,sequence,error"
    );
    assert_eq!(
        rows[1],
        format!("1,{id},1656432460105,2022-06-28T16:07:40.105Z,11,26,0,")
    );
    assert!(
        rows[2].starts_with("2,!,,,,,,\"id \"\"!\"\" is not base62"),
        "{text}"
    );
}

#[tokio::test]
async fn bulk_decode_refuses_what_it_cannot_read() {
    // 10,000 IDs is the most; the largest form of each fits the body limit.
    let most: Vec<String> = (0..10_000u64).map(|i| (u64::MAX - i).to_string()).collect();
    let reply = post(
        "/api/v1/decode?layout=discord",
        "application/json",
        "application/json",
        serde_json::to_string(&most).unwrap(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json().as_array().unwrap().len(), 10_000);
    let reply = post(
        "/api/v1/decode",
        "text/plain",
        "application/json",
        most.join("\n"),
    )
    .await;
    assert_eq!(reply.json().as_array().unwrap().len(), 10_000);

    let too_many = "1\n".repeat(10_001);
    assert_problem(
        &post("/api/v1/decode", "text/plain", "application/json", too_many).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        Some("body"),
        "the body holds more than 10000 IDs; send at most 10000 a request",
    );
    let too_many = serde_json::to_string(&vec!["1"; 10_001]).unwrap();
    assert_problem(
        &post(
            "/api/v1/decode",
            "application/json",
            "application/json",
            too_many,
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        Some("body"),
        "more than 10000 IDs",
    );
    assert_problem(
        &post(
            "/api/v1/decode",
            "application/json",
            "application/json",
            r#"{"ids": [1]}"#,
        )
        .await,
        StatusCode::BAD_REQUEST,
        Some("body"),
        "the body is not a JSON array of strings",
    );
    assert_problem(
        &post(
            "/api/v1/decode?count=3",
            "text/plain",
            "application/json",
            "1",
        )
        .await,
        StatusCode::BAD_REQUEST,
        Some("count"),
        "this route takes no parameter \"count\"",
    );
    assert_problem(
        &post(
            "/api/v1/decode",
            "text/plain",
            "application/json",
            vec![b'1'; 600 * 1024],
        )
        .await,
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        "too large",
    );
}

/// Input a spreadsheet would evaluate comes back in the CSV as text: quoted,
/// after a `'`, in the input column.
#[tokio::test]
async fn bulk_decode_csv_neutralises_formulas() {
    let reply = post(
        "/api/v1/decode",
        "text/plain",
        "text/csv",
        "=1+1\n+cmd|'/c'!A0\n@SUM(A1)\n-2+3\n4194439168\n",
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let text = reply.text();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    for (row, cell) in rows.iter().zip([
        "\"'=1+1\"",
        "\"'+cmd|'/c'!A0\"",
        "\"'@SUM(A1)\"",
        "\"'-2+3\"",
        "4194439168",
    ]) {
        let id_column = row.split_once(',').unwrap().1;
        assert!(id_column.starts_with(cell), "{row}");
    }
    // No cell of the answer starts like a formula.
    for row in &rows {
        for cell in row.split(',') {
            assert!(!cell.starts_with(['=', '+', '@']), "{row}");
        }
    }
}

/// The record format by `Accept`: `text/*` takes CSV, the only text the
/// route writes; a header that takes none of JSON, NDJSON and CSV is 406.
#[tokio::test]
async fn accept_picks_the_format_or_is_406() {
    let reply = post("/api/v1/decode", "text/plain", "text/*", "4194439168").await;
    assert_eq!(reply.content_type, "text/csv; charset=utf-8");
    let reply = post(
        "/api/v1/decode",
        "text/plain",
        "text/csv;q=0.2, application/ndjson",
        "4194439168",
    )
    .await;
    assert_eq!(reply.content_type, "application/x-ndjson");
    let reply = post("/api/v1/decode", "text/plain", "image/png", "4194439168").await;
    assert_problem(
        &reply,
        StatusCode::NOT_ACCEPTABLE,
        Some("accept"),
        "this route writes application/json, application/x-ndjson or text/csv",
    );
}

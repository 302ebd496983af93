//! Text forms (base62, base32, base58) through compose, decode and
//! generate.

use crate::support::stdout_of;

#[test]
fn text_forms_round_trip_through_compose_decode_and_generate() {
    let base62 = stdout_of(&[
        "compose",
        "-t",
        "1288834975657",
        "--machine",
        "1",
        "--datacenter",
        "1",
        "--format",
        "base62",
    ]);
    let first = base62.lines().next().unwrap();
    assert_eq!(
        first,
        snowflake::Id::new(4194439168).to_text(snowflake::TextForm::Base62)
    );
    let decoded = stdout_of(&["decode", "--format", "base62", first, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&decoded).unwrap();
    assert_eq!(v["id"], "4194439168");
    assert_eq!(v["text"]["base62"], first);
    // Crockford's aliases and lower case read as the canonical form.
    let canonical = v["text"]["base32"].as_str().unwrap().to_string();
    let sloppy = canonical.to_lowercase().replace('0', "o");
    let again = stdout_of(&["decode", "--format", "base32", &sloppy, "--json"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&again).unwrap()["id"],
        "4194439168"
    );

    let out = stdout_of(&["generate", "-n", "2000", "--format", "base32"]);
    let ids: Vec<&str> = out.lines().collect();
    assert_eq!(ids.len(), 2000);
    assert!(ids.iter().all(|id| id.len() == 13), "{out}");
    // Fixed width: the text sorts as the IDs were issued.
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

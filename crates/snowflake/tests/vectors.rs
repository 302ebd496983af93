//! The core against `testdata/vectors.json`, the cases the page's JavaScript
//! engine and the SQL functions are checked against too. Every ID and verdict
//! in that file was computed by `scripts/make-vectors.py` from the formula and
//! its own copy of the presets, not by this crate, so a wrong shift, a masked
//! field or a preset that drifted fails here.

use std::path::Path;

use serde_json::Value;
use snowflake::{Error, Id, Layout};

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cases<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn string<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {case}"))
}

fn int(case: &Value, key: &str) -> Option<i64> {
    case.get(key).map(|v| {
        v.as_i64()
            .unwrap_or_else(|| panic!("{key} is not an i64 in {case}"))
    })
}

/// The case's layout with its epoch and tick overrides applied.
fn layout(case: &Value, key: &str) -> Result<Layout, Error> {
    let mut layout = Layout::parse(string(case, key))?;
    if let Some(epoch) = int(case, "epoch_ms") {
        layout = layout.with_epoch_ms(epoch)?;
    }
    if let Some(tick) = int(case, "tick_ms") {
        let tick = u64::try_from(tick).unwrap_or_else(|_| panic!("negative tick in {case}"));
        layout = layout.with_tick_ms(tick)?;
    }
    Ok(layout)
}

/// Field values by name; a string is text as a user typed it, read with the
/// one field-value parser.
fn values(layout: &Layout, case: &Value) -> Result<Vec<(String, u64)>, Error> {
    let fields = case["fields"].as_object().expect("fields is an object");
    fields
        .iter()
        .map(|(name, value)| {
            let value = match value {
                Value::String(text) => layout.parse_value(name, text)?,
                other => other
                    .as_u64()
                    .unwrap_or_else(|| panic!("{name} is not a u64 in {case}")),
            };
            Ok((name.clone(), value))
        })
        .collect()
}

fn compose(layout: &Layout, case: &Value) -> Result<Id, Error> {
    let values = values(layout, case)?;
    let borrowed: Vec<(&str, u64)> = values.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let timestamp = int(case, "timestamp_ms").expect("timestamp_ms");
    layout.compose(timestamp, &borrowed)
}

#[test]
fn compose_cases_compose_and_decode_back() {
    let v = vectors();
    let mut checked = 0;
    for case in cases(&v, "compose").iter() {
        let layout = layout(case, "layout").unwrap_or_else(|e| panic!("{case}: {e}"));
        let id = compose(&layout, case).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(id.to_string(), string(case, "id"), "{case}");
        // The text forms, as the page writes them: every form the core has
        // beside decimal, and no other, so that a form added on one side
        // only fails here.
        if let Some(forms) = case["text"].as_object() {
            let mut named: Vec<&str> = forms.keys().map(String::as_str).collect();
            let mut ours: Vec<&str> = snowflake::TextForm::ENCODED
                .iter()
                .map(|f| f.name())
                .collect();
            named.sort_unstable();
            ours.sort_unstable();
            assert_eq!(
                named, ours,
                "{case}: the vectors' text forms and the core's"
            );
            for (name, text) in forms {
                let form = snowflake::TextForm::ALL
                    .into_iter()
                    .find(|f| f.name() == name)
                    .unwrap_or_else(|| panic!("{case}: no text form {name}"));
                let text = text.as_str().expect("a text form is a string");
                assert_eq!(id.to_text(form), text, "{case}: {name}");
                assert_eq!(form.parse(text).unwrap(), id, "{case}: {name}");
            }
        }

        let decoded = layout
            .decode(Id::parse(string(case, "id")).unwrap())
            .unwrap();
        assert_eq!(
            Some(decoded.timestamp_ms()),
            int(case, "timestamp_ms"),
            "{case}"
        );
        let fields: Vec<(String, u64)> = decoded.fields().map(|(n, v)| (n.into(), v)).collect();
        let mut expected = values(&layout, case).unwrap();
        expected.sort();
        let mut got = fields.clone();
        got.sort();
        assert_eq!(got, expected, "{case}");
        let width: u32 = decoded.segments().iter().map(|s| u32::from(s.bits())).sum();
        assert_eq!(width, 64, "{case}");

        if let Some(hex) = case["text"]["hex"].as_str() {
            assert_eq!(format!("{id:#x}"), hex, "{case}");
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} compose cases checked");
}

fn attempt(case: &Value) -> Result<(), Error> {
    match string(case, "op") {
        "layout" => layout(case, "spec").map(drop),
        "decode" => {
            let layout = layout(case, "layout")?;
            layout.decode(Id::parse(string(case, "id"))?).map(drop)
        }
        "compose" => compose(&layout(case, "layout")?, case).map(drop),
        other => panic!("unknown op {other:?} in {case}"),
    }
}

#[test]
fn error_cases_name_the_field_and_the_value() {
    let v = vectors();
    let mut checked = 0;
    for case in cases(&v, "errors").iter() {
        let err = match attempt(case) {
            Ok(()) => panic!("{case} was accepted"),
            Err(err) => err,
        };
        assert_eq!(err.field(), Some(string(case, "field")), "{case}: {err}");
        let value = string(case, "value");
        assert!(
            err.to_string().contains(value),
            "{case}: {err:?} does not name {value}"
        );
        // `Error::value` gives the same value, but for a malformed layout
        // spec, whose message names the part at fault only in words.
        match err.value() {
            Some(given) => assert_eq!(given, value, "{case}: {err:?}"),
            None => assert_eq!(string(case, "op"), "layout", "{case}: {err:?} has no value"),
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} error cases checked");
}

/// The table of presets is the one the vectors were made from: name, widths,
/// epoch, tick, sequence, platform and the day its IDs began, in order. A
/// preset added to the core must be added to `scripts/make-vectors.py` too,
/// and the other languages' copies are checked against the same file.
#[test]
fn the_table_of_presets_is_the_one_in_the_vectors() {
    let v = vectors();
    let expected = cases(&v, "presets");
    assert_eq!(expected.len(), snowflake::Preset::ALL.len());
    for (case, preset) in expected.iter().zip(snowflake::Preset::ALL) {
        let layout = preset.layout();
        assert_eq!(preset.name(), string(case, "name"), "{case}");
        assert_eq!(layout.spec(), string(case, "spec"), "{case}");
        assert_eq!(Some(layout.epoch_ms()), int(case, "epoch_ms"), "{case}");
        assert_eq!(
            Some(layout.tick_ms() as i64),
            int(case, "tick_ms"),
            "{case}"
        );
        assert_eq!(preset.sequence(), string(case, "sequence"), "{case}");
        let platform = preset.platform();
        assert_eq!(platform.name(), string(case, "platform"), "{case}");
        assert_eq!(
            Some(platform.launched_ms()),
            int(case, "launched_ms"),
            "{case}"
        );
        let day = snowflake::UnixMillis(platform.launched_ms()).to_string();
        assert_eq!(&day[..10], string(case, "launched"), "{case}");
        assert_eq!(layout.platform(), Some(platform));
    }
}

/// Each ID read under every preset against the case's fixed "now": the
/// verdict, the time read, and what the reason names, as `scripts/make-vectors.py`
/// computed them from the formula and the platforms' days.
#[test]
fn verdict_cases_read_the_same_under_every_preset() {
    let v = vectors();
    let presets = Layout::presets();
    let mut checked = 0;
    let mut seen = std::collections::HashSet::new();
    for case in cases(&v, "readings") {
        let id = Id::parse(string(case, "id")).unwrap();
        let now = int(case, "now_ms").expect("now_ms");
        let all = snowflake::Readings::new(&presets, id, now);
        let expected = case["readings"].as_array().expect("readings");
        assert_eq!(all.readings().len(), expected.len(), "{case}");
        for (got, want) in all.readings().iter().zip(expected) {
            let name = got.layout().name();
            let context = format!("{} under {name}", string(case, "note"));
            assert_eq!(name, string(want, "layout"), "{context}");
            let verdict = got.verdict().name();
            assert_eq!(verdict, string(want, "verdict"), "{context}");
            seen.insert((name.into_owned(), verdict));
            assert_eq!(
                got.decoded().map(|d| d.timestamp_ms()),
                want["timestamp_ms"].as_i64(),
                "{context}"
            );
            let reason = got.reason().unwrap_or_default();
            match want["why"].as_str() {
                None => assert_eq!(
                    got.reason().is_some(),
                    verdict == "impossible",
                    "{context}: {reason}"
                ),
                Some("future") => {
                    assert!(reason.contains("is in the future"), "{context}: {reason}")
                }
                Some("before") => {
                    let platform = got.layout().platform().unwrap();
                    let day = snowflake::UnixMillis(platform.launched_ms()).to_string();
                    let began = format!("is before {} began ({})", platform.name(), &day[..10]);
                    assert!(reason.contains(&began), "{context}: {reason}");
                }
                Some(other) => panic!("{context}: unknown why {other:?}"),
            }
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} verdict cases checked");
    // Every preset is seen possible and implausible, and impossible unless
    // it uses all 64 bits, at least once.
    for layout in &presets {
        for verdict in ["possible", "implausible", "impossible"] {
            let expected = verdict != "impossible" || layout.bits() < 64;
            assert_eq!(
                seen.contains(&(layout.name().into_owned(), verdict)),
                expected,
                "{layout} {verdict}"
            );
        }
    }
}

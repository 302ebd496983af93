//! The core's presets as data for the page: the page's engine builds its
//! preset list from this, so the page and the API judge an ID by one table.
//!
//! Each entry is the core's one JSON description of a layout (as
//! `GET /api/v1/layouts` sends it) with the preset's platform added, and the
//! block carries the core's slack for times a little in the future. It is an
//! inline `<script type="application/json">`: a data block that the browser
//! never runs, so the Content-Security-Policy, which allows only the page's
//! own script by hash, needs no entry for it.

use serde::Serialize;
use snowflake::{Layout, Platform, Readings};

#[derive(Serialize)]
struct Block<'a> {
    future_slack_ms: i64,
    presets: Vec<Entry<'a>>,
}

#[derive(Serialize)]
struct Entry<'a> {
    #[serde(flatten)]
    layout: &'a Layout,
    platform: Option<PlatformJson>,
}

#[derive(Serialize)]
struct PlatformJson {
    name: &'static str,
    launched_ms: i64,
}

impl From<Platform> for PlatformJson {
    fn from(p: Platform) -> Self {
        Self {
            name: p.name(),
            launched_ms: p.launched_ms(),
        }
    }
}

/// The text of the data block: JSON with every `<` written `\u003c`, so that
/// nothing in it can end the element or open a comment.
pub fn json() -> String {
    let presets = Layout::presets();
    let block = Block {
        future_slack_ms: Readings::FUTURE_SLACK_MS,
        presets: presets
            .iter()
            .map(|layout| Entry {
                layout,
                platform: layout.platform().map(PlatformJson::from),
            })
            .collect(),
    };
    let text = match serde_json::to_string(&block) {
        Ok(text) => text,
        // Plain data with string keys: serialising it cannot fail.
        Err(err) => unreachable!("the presets do not serialise: {err}"),
    };
    text.replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// JavaScript reads a JSON number as a double: beyond 2^53 it is no
    /// longer the integer the core wrote.
    const JS_SAFE: u64 = (1 << 53) - 1;

    fn numbers(value: &Value, at: &str, out: &mut Vec<(String, serde_json::Number)>) {
        match value {
            Value::Number(n) => out.push((at.to_string(), n.clone())),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    numbers(item, &format!("{at}[{i}]"), out);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    numbers(item, &format!("{at}.{key}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_preset_with_what_the_engine_reads() {
        let block: Value = serde_json::from_str(&json()).unwrap();
        assert_eq!(block["future_slack_ms"], Readings::FUTURE_SLACK_MS);
        let presets = block["presets"].as_array().unwrap();
        let names: Vec<&str> = presets
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        let core: Vec<String> = Layout::presets()
            .iter()
            .map(|l| l.name().into_owned())
            .collect();
        assert_eq!(names, core);
        for (entry, layout) in presets.iter().zip(Layout::presets()) {
            assert_eq!(entry["epoch_ms"], layout.epoch_ms());
            assert_eq!(entry["tick_ms"], layout.tick_ms());
            assert_eq!(entry["time_bits"], layout.time_bits());
            assert_eq!(entry["spec"], layout.spec());
            let fields: Vec<(String, u8)> =
                serde_json::from_value(entry["fields"].clone()).unwrap();
            let expected: Vec<(String, u8)> = layout
                .fields()
                .iter()
                .map(|f| (f.name().to_string(), f.bits()))
                .collect();
            assert_eq!(fields, expected);
            assert_eq!(
                entry["sequence"].as_str(),
                layout.sequence().map(|f| f.name())
            );
            let platform = layout.platform().unwrap();
            assert_eq!(entry["platform"]["name"], platform.name());
            assert_eq!(entry["platform"]["launched_ms"], platform.launched_ms());
        }
    }

    #[test]
    fn every_number_survives_javascript() {
        let block: Value = serde_json::from_str(&json()).unwrap();
        let mut found = Vec::new();
        numbers(&block, "", &mut found);
        assert!(!found.is_empty());
        for (at, n) in found {
            // A fraction was a double in Rust too; an integer must fit 53 bits.
            let fits = n.is_f64() || n.as_i64().is_some_and(|v| v.unsigned_abs() <= JS_SAFE);
            assert!(fits, "{at} = {n} is not exact as a JavaScript number");
        }
    }

    #[test]
    fn nothing_in_it_ends_the_element() {
        let text = json();
        assert!(!text.contains('<'));
        // A name that held "</script>" would arrive intact.
        let escaped = r#""</script><!--""#.replace('<', "\\u003c");
        assert_eq!(
            serde_json::from_str::<String>(&escaped).unwrap(),
            "</script><!--"
        );
    }
}

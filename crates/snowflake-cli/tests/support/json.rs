//! Reading the JSON a run printed.

use serde_json::Value;

/// The text at `key` of each element of `array`, which must be an array of
/// objects whose `key` is a string.
pub fn texts_at<'a>(array: &'a Value, key: &str) -> Vec<&'a str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|element| element[key].as_str().unwrap())
        .collect()
}

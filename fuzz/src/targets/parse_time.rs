//! `UnixMillis::parse_rfc3339`, the one RFC 3339 reader behind the command,
//! the API, Python and the WebAssembly module: it never panics, every time
//! it accepts reads back from the date the core writes for it, and `jiff`,
//! which the command used alone before, reads the same text to the same
//! millisecond wherever its years reach.
//!
//! The input bytes are the string, so a crash artifact reads as the date.

use snowflake::UnixMillis;

/// The property, on one input.
pub fn run(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Some(time) = UnixMillis::parse_rfc3339(s) else {
        return;
    };
    let written = time.to_string();
    assert_eq!(
        UnixMillis::parse_rfc3339(&written),
        Some(time),
        "{s:?} read as {written}, which does not read back"
    );
    match s.parse::<jiff::Timestamp>() {
        Ok(jiff) => assert_eq!(
            jiff.as_millisecond(),
            time.0,
            "{s:?}: jiff reads it otherwise"
        ),
        // jiff's timestamps span years -9999 to 9999 (and a day's offset
        // either way); the core reads every year its writer writes.
        Err(_) => assert!(
            !(-9998..=9998).contains(&year(&written)),
            "{s:?} (read as {written}) is refused by jiff"
        ),
    }
}

/// The year of a date the core wrote.
fn year(written: &str) -> i64 {
    let sign = if written.starts_with('-') { -1 } else { 1 };
    let digits = written.trim_start_matches(['+', '-']);
    let end = digits.find('-').unwrap_or(digits.len());
    sign * digits[..end].parse::<i64>().unwrap_or(i64::MAX)
}

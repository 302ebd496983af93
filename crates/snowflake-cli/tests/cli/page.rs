//! `snowflake page`: the web page as one self-contained file.

use crate::support::stdout_of;

/// `snowflake page` writes the page as one file: the same document the
/// service sends, with everything inline and a policy that allows nothing
/// from elsewhere (the browser tests open it from disk).
#[test]
fn page_prints_one_self_contained_document() {
    let html = stdout_of(&["page"]);
    assert!(
        html.starts_with("<!doctype html>"),
        "{}",
        &html[..80.min(html.len())]
    );
    assert!(html.contains("Content-Security-Policy"));
    assert!(html.contains(snowflake_server::content_security_policy()));
    assert!(!html.contains(" src=\"http") && !html.contains(" href=\"http"));
}

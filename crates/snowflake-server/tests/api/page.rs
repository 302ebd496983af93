//! The page at `/`: the language it is served in and its security headers.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};

use crate::support::*;

#[tokio::test]
async fn page_is_served_in_the_browser_language() {
    let request = Request::get("/")
        .header(header::ACCEPT_LANGUAGE, "de-DE,de;q=0.9,en;q=0.5")
        .body(Body::empty())
        .unwrap();
    let reply = send_with(&config(), request).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.content_type.starts_with("text/html"));
    let html = reply.text();
    assert!(html.contains("lang=\"de\""), "{html}");
    // One self-contained document: nothing else to fetch.
    assert!(!html.contains("/assets/"), "{html}");
    assert_eq!(get("/assets/app.js").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_page_carries_its_policy_and_every_answer_nosniff() {
    let header = |reply: &Reply, name: &str| {
        reply
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let page = get("/").await;
    let csp = header(&page, "content-security-policy").expect("the page has no CSP header");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    // The page's own policy (scripts and styles by hash), with framing
    // refused, which only a header can say.
    assert!(
        csp.starts_with(snowflake_server::content_security_policy()),
        "{csp}"
    );
    assert_eq!(
        header(&page, "referrer-policy").as_deref(),
        Some("no-referrer")
    );
    assert_eq!(header(&page, "x-frame-options").as_deref(), Some("DENY"));
    for uri in ["/", "/api/v1/ids", "/nowhere", "/api/v1/compose?machine=99"] {
        let reply = get(uri).await;
        assert_eq!(
            header(&reply, "x-content-type-options").as_deref(),
            Some("nosniff"),
            "{uri}"
        );
    }
}

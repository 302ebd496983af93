//! The web page: one self-contained HTML document, scripts, styles and icon
//! inline, under a Content-Security-Policy that allows exactly those inline
//! blocks by hash. The server sends it at `/`; [`standalone_page`] is the same
//! document for saving to disk (`snowflake page > snowflake.html`), where it
//! works from `file://` with the network off.
//!
//! The parts, each from a kept crate where one fits:
//!
//! - the document is an `askama` template (`assets/index.html`), checked
//!   when the crate builds and HTML-escaped wherever a value is not marked
//!   as the page's own markup. A runtime engine (minijinja) costs about as
//!   much to build as askama's parser and macro, but would find a broken
//!   template only when the page is first asked for, and carry an
//!   interpreter in the binary for six values;
//! - the CSP hashes are SHA-256 from `sha2`, written in `base64`;
//! - the language comes from `Accept-Language` (see `language`);
//! - the script is the page's ES modules (`assets/*.js`), readable on their
//!   own and imported as they are by the Node tests, joined into one inline
//!   module by `bundle` (hand-written; its module doc says why);
//! - the core's presets travel as a JSON data block (see `presets`), so the
//!   page judges IDs by the same table as the API.

mod bundle;
mod language;
mod presets;

use std::sync::{Arc, OnceLock};

use askama::Template;
use axum::Router;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::state::AppState;

const STYLE: &str = include_str!("../assets/style.css");

/// The page's modules, in any order: the bundler orders them by their
/// imports, and a test checks that every `.js` file in `assets/` is here.
const MODULES: &[(&str, &str)] = &[
    ("engine", include_str!("../assets/engine.js")),
    ("idtext", include_str!("../assets/idtext.js")),
    ("many", include_str!("../assets/many.js")),
    ("rows", include_str!("../assets/rows.js")),
    ("ff1", include_str!("../assets/ff1.js")),
    ("masking", include_str!("../assets/masking.js")),
    ("strings", include_str!("../assets/strings.js")),
    ("lang-en", include_str!("../assets/lang-en.js")),
    ("lang-de", include_str!("../assets/lang-de.js")),
    ("dom", include_str!("../assets/dom.js")),
    ("store", include_str!("../assets/store.js")),
    ("time", include_str!("../assets/time.js")),
    ("errors", include_str!("../assets/errors.js")),
    ("preferences", include_str!("../assets/preferences.js")),
    ("copy", include_str!("../assets/copy.js")),
    ("layout", include_str!("../assets/layout.js")),
    ("compose", include_str!("../assets/compose.js")),
    ("result", include_str!("../assets/result.js")),
    ("decode", include_str!("../assets/decode.js")),
    ("everywhere", include_str!("../assets/everywhere.js")),
    ("range", include_str!("../assets/range.js")),
    ("bulk", include_str!("../assets/bulk.js")),
    ("unmask", include_str!("../assets/unmask.js")),
    ("generate", include_str!("../assets/generate.js")),
    ("share", include_str!("../assets/share.js")),
    ("app", include_str!("../assets/app.js")),
];

/// Where the served page's script finds the API; the saved page has none and
/// hides Generate.
const API_BASE: &str = "/api/v1";

/// The document. Values are HTML-escaped unless marked `safe`: only the
/// page's own style, script, data block and policy are (a test checks that
/// the policy holds nothing an attribute would need escaped).
#[derive(Template)]
#[template(path = "index.html")]
struct Page<'a> {
    lang: &'a str,
    /// The API's base on the served page; `None` on the saved one.
    api: Option<&'a str>,
    csp: &'a str,
    style: &'a str,
    script: &'a str,
    presets: &'a str,
}

/// The headers of the page itself: its policy with `frame-ancestors
/// 'none'`, which a `<meta>` tag cannot state (it applies only as a
/// header), no referrer to other sites, no framing by older browsers either.
/// Only the page gets them: a JSON answer is no document, and the one-ID
/// path stays free of headers that protect nothing there.
fn page_headers(headers: &mut HeaderMap) {
    static CSP: OnceLock<HeaderValue> = OnceLock::new();
    let csp = CSP.get_or_init(|| {
        let policy = format!("{}; frame-ancestors 'none'", content_security_policy());
        HeaderValue::from_str(&policy).unwrap_or(HeaderValue::from_static("default-src 'none'"))
    });
    headers.insert(header::CONTENT_SECURITY_POLICY, csp.clone());
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

pub fn router() -> Router<Arc<AppState>> {
    Router::new().route("/", get(index))
}

/// The parts of the page that do not depend on the request, built once.
struct Parts {
    script: String,
    presets: String,
    csp: String,
}

/// A CSP hash source for an inline block: `'sha256-…'` over its exact text.
fn hash_source(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

fn parts() -> &'static Parts {
    static PARTS: OnceLock<Parts> = OnceLock::new();
    PARTS.get_or_init(|| {
        let script = match bundle::bundle(MODULES) {
            Ok(script) => script,
            // The modules are compiled in and bundled by a test.
            Err(err) => unreachable!("the page's modules do not bundle: {err}"),
        };
        // connect-src 'self' is for Generate on the served page; from a file
        // it allows nothing, which is what the saved page needs. The presets
        // block is data, never run, so script-src needs no hash for it.
        let csp = format!(
            "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src 'self'; \
             base-uri 'none'; form-action 'none'",
            hash_source(&script),
            hash_source(STYLE)
        );
        Parts {
            script,
            presets: presets::json(),
            csp,
        }
    })
}

/// The page's Content-Security-Policy, as the `<meta>` tag states it. A
/// response header for the page should send this plus `frame-ancestors
/// 'none'` (which a `<meta>` tag cannot carry), never a policy of its own:
/// one that allows less would block the page's inline script.
///
/// ```
/// let csp = snowflake_server::content_security_policy();
/// assert!(csp.starts_with("default-src 'none'; script-src 'sha256-"));
/// assert!(!csp.contains("unsafe"));
/// ```
pub fn content_security_policy() -> &'static str {
    &parts().csp
}

fn render(lang: &str, api: Option<&str>) -> String {
    let parts = parts();
    let page = Page {
        lang,
        api,
        csp: &parts.csp,
        style: STYLE,
        script: &parts.script,
        presets: &parts.presets,
    };
    match page.render() {
        Ok(html) => html,
        // Rendering writes into a String, and every value is plain text.
        Err(err) => unreachable!("the page does not render: {err}"),
    }
}

/// The web page as one self-contained HTML document for saving to a file:
/// compose, decode, bounds, bulk decode and unmasking work from `file://`
/// with no network; Generate, which needs the service, is hidden. Its
/// script, styles and presets are byte for byte those of the page the
/// service sends at `/`.
///
/// ```
/// let html = snowflake_server::standalone_page();
/// assert!(html.starts_with("<!doctype html>"));
/// assert!(html.contains("Content-Security-Policy"));
/// assert!(html.contains(r#"<script type="application/json" id="presets">"#));
/// assert!(!html.contains(" data-api=\""));
/// ```
pub fn standalone_page() -> String {
    render(language::LANGUAGES[0], None)
}

async fn index(headers: HeaderMap) -> Response {
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let html = render(language::negotiate(accept), Some(API_BASE));
    let mut response = (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::VARY, HeaderValue::from_static("accept-language")),
        ],
        html,
    )
        .into_response();
    page_headers(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn between<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
        let start = html.find(open).expect(open) + open.len();
        let end = html[start..].find(close).expect(close) + start;
        &html[start..end]
    }

    const MODULE_OPEN: &str = "<script type=\"module\">";
    const PRESETS_OPEN: &str = "<script type=\"application/json\" id=\"presets\">";

    #[test]
    fn served_and_saved_pages_share_their_code_hashes_and_presets() {
        let served = render("de", Some(API_BASE));
        let saved = standalone_page();
        let csp = content_security_policy();
        for html in [&served, &saved] {
            assert!(
                !html.contains("{{") && !html.contains("{%"),
                "a placeholder is left"
            );
            let script = between(html, MODULE_OPEN, "</script>");
            let style = between(html, "<style>", "</style>");
            assert_eq!(script, parts().script);
            assert_eq!(style, STYLE);
            assert!(csp.contains(&hash_source(script)));
            assert!(csp.contains(&hash_source(style)));
            assert!(!csp.contains("unsafe"), "{csp}");
            // The meta tag states the same policy, as it is: nothing in it
            // could end the attribute or need escaping.
            let meta = between(
                html,
                "http-equiv=\"Content-Security-Policy\" content=\"",
                "\"",
            );
            assert_eq!(meta, csp);
            assert!(!csp.contains(['"', '<', '>', '&']), "{csp}");
            // One script to run, one data block, nothing fetched.
            assert_eq!(html.matches("<script").count(), 2);
            assert_eq!(between(html, PRESETS_OPEN, "</script>"), presets::json());
            assert!(!html.contains(" src=") && !html.contains("<link rel=\"stylesheet\""));
        }
        assert!(served.contains("<html lang=\"de\" data-api=\"/api/v1\">"));
        assert!(saved.contains("<html lang=\"en\" data-lang-auto>"));
    }

    #[test]
    fn the_policy_hashes_match_known_digests() {
        // As `openssl dgst -sha256 -binary | base64` gives them.
        assert_eq!(
            hash_source("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
        assert_eq!(
            hash_source(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
    }

    #[test]
    fn the_page_modules_bundle() {
        let script = bundle::bundle(MODULES).unwrap();
        // The entry point runs last, after every module it needs.
        let app = script.find("const module_app = ").unwrap();
        for (name, _) in MODULES.iter().filter(|(n, _)| *n != "app") {
            let at = script.find(&format!("const module_{} = ", name.replace('-', "_")));
            assert!(at.is_some_and(|at| at < app), "{name}");
        }
    }

    #[test]
    fn every_module_in_assets_is_served() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".js").map(str::to_string))
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = MODULES.iter().map(|(n, _)| n.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }

    #[test]
    fn a_language_is_escaped_as_text() {
        let html = render("\"><script>", Some("/a\"b"));
        assert!(
            html.contains("lang=\"&#34;&#62;&#60;script&#62;\""),
            "{}",
            &html[..200]
        );
        assert!(html.contains("data-api=\"/a&#34;b\""));
    }
}

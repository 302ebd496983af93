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
//! - the page's model is the core itself, compiled to WebAssembly
//!   (`crates/snowflake-wasm`, committed as `bindings/npm/snowflake.wasm` by
//!   `scripts/wasm`, with `bindings/npm/snowflake.js` calling it): its bytes
//!   travel gzipped (`flate2`; the browser's `DecompressionStream` unpacks
//!   them) as a base64 data block that the script instantiates, which the
//!   policy allows with `'wasm-unsafe-eval'` (compiling WebAssembly, not
//!   `eval` of text). The presets, text forms and every rule come from it.

mod bundle;
mod language;

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
    (
        "snowflake",
        include_str!("../../../bindings/npm/snowflake.js"),
    ),
    ("many", include_str!("../assets/many.js")),
    ("rows", include_str!("../assets/rows.js")),
    ("forms", include_str!("../assets/forms.js")),
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

/// The module the page computes with: the core, compiled to WebAssembly.
const WASM: &[u8] = include_bytes!("../../../bindings/npm/snowflake.wasm");

/// Where the served page's script finds the API; the saved page has none and
/// hides Generate.
const API_BASE: &str = "/api/v1";

/// The document. Values are HTML-escaped unless marked `safe`: only the
/// page's own style, script, module and policy are (a test checks that the
/// policy holds nothing an attribute would need escaped).
#[derive(Template)]
#[template(path = "index.html")]
struct Page<'a> {
    lang: &'a str,
    /// The API's base on the served page; `None` on the saved one.
    api: Option<&'a str>,
    csp: &'a str,
    style: &'a str,
    script: &'a str,
    wasm: &'a str,
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
    /// The module's bytes gzipped, in base64, which needs no escaping in HTML.
    wasm: String,
    csp: String,
}

/// The module gzipped. A base64 text of the module itself compresses
/// poorly on the wire (its six bits a character hide the repeats gzip
/// finds), so the page carries the module already compressed.
fn gzipped(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    match encoder.write_all(bytes).and_then(|()| encoder.finish()) {
        Ok(packed) => packed,
        // Writing into a Vec cannot fail.
        Err(err) => unreachable!("the module does not gzip: {err}"),
    }
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
        // it allows nothing, which is what the saved page needs. The module's
        // block is data, never run as a script, so script-src needs no hash
        // for it; 'wasm-unsafe-eval' lets the script compile it, and allows
        // no eval of JavaScript.
        let csp = format!(
            "default-src 'none'; script-src {} 'wasm-unsafe-eval'; style-src {}; img-src data:; \
             connect-src 'self'; base-uri 'none'; form-action 'none'",
            hash_source(&script),
            hash_source(STYLE)
        );
        Parts {
            script,
            wasm: base64::engine::general_purpose::STANDARD.encode(gzipped(WASM)),
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
/// assert!(csp.contains(" 'wasm-unsafe-eval';"));
/// assert!(!csp.contains("'unsafe-eval'") && !csp.contains("'unsafe-inline'"));
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
        wasm: &parts.wasm,
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
/// script, styles and module are byte for byte those of the page the
/// service sends at `/`.
///
/// ```
/// let html = snowflake_server::standalone_page();
/// assert!(html.starts_with("<!doctype html>"));
/// assert!(html.contains("Content-Security-Policy"));
/// assert!(html.contains(r#"<script type="application/gzip" id="snowflake-wasm">"#));
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
    /// The modules that are not the page's own files in `assets/`: the glue
    /// of the WebAssembly module, shared with the npm package.
    const SHARED_MODULES: &[&str] = &["snowflake"];

    const WASM_OPEN: &str = "<script type=\"application/gzip\" id=\"snowflake-wasm\">";

    /// The policy allows what the page needs and no more: its own script
    /// and style by hash, WebAssembly compiled, never JavaScript from text.
    fn assert_tight(csp: &str) {
        assert!(!csp.contains("'unsafe-eval'"), "{csp}");
        assert!(!csp.contains("'unsafe-inline'"), "{csp}");
        assert!(!csp.contains("'unsafe-hashes'"), "{csp}");
        assert_eq!(csp.matches("unsafe").count(), 1, "{csp}");
        assert!(csp.contains(" 'wasm-unsafe-eval';"), "{csp}");
    }

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
            assert_tight(csp);
            // The meta tag states the same policy, as it is: nothing in it
            // could end the attribute or need escaping.
            let meta = between(
                html,
                "http-equiv=\"Content-Security-Policy\" content=\"",
                "\"",
            );
            assert_eq!(meta, csp);
            assert!(!csp.contains(['"', '<', '>', '&']), "{csp}");
            // One script to run, the module's block, nothing fetched.
            assert_eq!(html.matches("<script").count(), 2);
            let wasm = between(html, WASM_OPEN, "</script>");
            let packed = base64::engine::general_purpose::STANDARD
                .decode(wasm)
                .unwrap();
            let mut bytes = Vec::new();
            let mut unpacked = flate2::read::GzDecoder::new(&packed[..]);
            std::io::Read::read_to_end(&mut unpacked, &mut bytes).unwrap();
            assert_eq!(bytes, WASM);
            assert!(bytes.starts_with(b"\0asm"));
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
        let mut listed: Vec<String> = MODULES
            .iter()
            .map(|(n, _)| n.to_string())
            .filter(|n| !SHARED_MODULES.contains(&n.as_str()))
            .collect();
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

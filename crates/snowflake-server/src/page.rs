//! The web page: one self-contained HTML document, scripts, styles and icon
//! inline, under a Content-Security-Policy that allows exactly those inline
//! blocks by hash. The server sends it at `/`; [`standalone_page`] is the same
//! document for saving to disk (`snowflake page > snowflake.html`), where it
//! works from `file://` with the network off.
//!
//! The script is three ES modules (`engine.js`, `strings.js`, `view.js`),
//! readable on their own and imported as they are by the Node tests. Browsers
//! refuse module imports from `file://`, so [`bundle`] joins them into one
//! inline module at start-up, each in its own scope: no build step, no tool.

mod sha256;

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;

const TEMPLATE: &str = include_str!("../assets/index.html");
const STYLE: &str = include_str!("../assets/style.css");
/// The modules in dependency order: each imports only from those before it.
const MODULES: [(&str, &str); 3] = [
    ("engine", include_str!("../assets/engine.js")),
    ("strings", include_str!("../assets/strings.js")),
    ("view", include_str!("../assets/view.js")),
];
/// Where the served page's script finds the API; the saved page has none and
/// hides Generate.
const API_BASE: &str = "/api/v1";

/// The headers of the page itself: its policy with `frame-ancestors
/// 'none'`, which a `<meta>` tag cannot state (it applies only as a
/// header), no referrer to other sites, no framing by older browsers either.
/// Only the page gets them: a JSON answer is no document, and 300 bytes more
/// on every one of them cost the one-ID path measurable throughput.
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
    csp: String,
}

fn parts() -> &'static Parts {
    static PARTS: OnceLock<Parts> = OnceLock::new();
    PARTS.get_or_init(|| {
        let script = bundle(&MODULES);
        let hash = |text: &str| {
            format!(
                "'sha256-{}'",
                sha256::base64(&sha256::digest(text.as_bytes()))
            )
        };
        // connect-src 'self' is for Generate on the served page; from a file
        // it allows nothing, which is what the saved page needs.
        let csp = format!(
            "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src 'self'; \
             base-uri 'none'; form-action 'none'",
            hash(&script),
            hash(STYLE)
        );
        Parts { script, csp }
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
    let attrs = match api {
        Some(base) => format!(" data-api=\"{base}\""),
        // Saved to disk, nothing chose a language yet: the browser's decides.
        None => " data-lang-auto".to_string(),
    };
    // Every placeholder is replaced once, in the template only, so text in
    // the style or the script can never be taken for one.
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + parts.script.len() + 256);
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match &after[..end] {
            "lang" => out.push_str(lang),
            "api" => out.push_str(&attrs),
            "csp" => out.push_str(&parts.csp),
            "style" => out.push_str(STYLE),
            "script" => {
                out.push_str("<script type=\"module\">");
                out.push_str(&parts.script);
                out.push_str("</script>");
            }
            other => {
                out.push_str("{{");
                out.push_str(other);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The web page as one self-contained HTML document for saving to a file:
/// compose, decode, bounds and bulk decode work from `file://` with no
/// network; Generate, which needs the service, is hidden. Its script and
/// styles are byte for byte those of the page the service sends at `/`.
///
/// ```
/// let html = snowflake_server::standalone_page();
/// assert!(html.starts_with("<!doctype html>"));
/// assert!(html.contains("Content-Security-Policy"));
/// assert!(!html.contains(" data-api=\""));
/// ```
pub fn standalone_page() -> String {
    render("en", None)
}

/// Joins ES modules into one script. Each module becomes a function scope
/// that returns its exports; `import { a } from './m.js'` and
/// `import * as m from './m.js'` read them from the scope of `m`. Only those
/// two import forms and `export` in front of a top-level declaration are
/// understood, which is all the page's modules use (a test keeps it so).
fn bundle(modules: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, source) in modules {
        let mut exports = Vec::new();
        let mut body = String::with_capacity(source.len());
        for line in source.lines() {
            if let Some(import) = line.strip_prefix("import ") {
                let (what, from) = import
                    .rsplit_once(" from ")
                    .unwrap_or_else(|| panic!("{name}.js: unreadable import: {line}"));
                let module = from
                    .trim_end_matches(';')
                    .trim_matches(|c| c == '\'' || c == '"')
                    .trim_start_matches("./")
                    .trim_end_matches(".js");
                let binding = what.strip_prefix("* as ").unwrap_or(what);
                body.push_str(&format!("const {binding} = module_{module};\n"));
            } else if let Some(decl) = line.strip_prefix("export ") {
                let mut words =
                    decl.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'));
                let exported = words
                    .find(|w| !matches!(*w, "" | "async" | "function" | "const" | "let" | "class"))
                    .unwrap_or_else(|| panic!("{name}.js: unreadable export: {line}"));
                exports.push(exported.to_string());
                body.push_str(decl);
                body.push('\n');
            } else {
                body.push_str(line);
                body.push('\n');
            }
        }
        out.push_str(&format!(
            "const module_{name} = (() => {{\n{body}return {{ {} }};\n}})();\n",
            exports.join(", ")
        ));
    }
    // An inline script ends at the first "</script", wherever it stands.
    out.replace("</script", "<\\/script")
}

/// German when the browser prefers it to English, else English.
pub fn language(headers: &HeaderMap) -> &'static str {
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut best = ("en", -1.0f32);
    for part in accept.split(',') {
        let mut pieces = part.trim().split(';');
        let tag = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = pieces
            .find_map(|p| p.trim().strip_prefix("q="))
            .and_then(|q| q.parse::<f32>().ok())
            .unwrap_or(1.0);
        let lang = match tag.split('-').next() {
            Some("de") => "de",
            Some("en") => "en",
            _ => continue,
        };
        if q > best.1 {
            best = (lang, q);
        }
    }
    best.0
}

async fn index(headers: HeaderMap) -> Response {
    let html = render(language(&headers), Some(API_BASE));
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

    #[test]
    fn picks_german_only_when_preferred() {
        let pick = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_LANGUAGE,
                HeaderValue::from_str(value).unwrap(),
            );
            language(&headers)
        };
        assert_eq!(pick("de-DE,de;q=0.9,en;q=0.8"), "de");
        assert_eq!(pick("en-US,en;q=0.9,de;q=0.8"), "en");
        assert_eq!(pick("fr-FR,de;q=0.5"), "de");
        assert_eq!(pick("fr"), "en");
        assert_eq!(language(&HeaderMap::new()), "en");
    }

    fn between<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
        let start = html.find(open).expect(open) + open.len();
        let end = html[start..].find(close).expect(close) + start;
        &html[start..end]
    }

    #[test]
    fn served_and_saved_pages_share_their_code_and_hashes() {
        let served = render("de", Some(API_BASE));
        let saved = standalone_page();
        for html in [&served, &saved] {
            assert!(!html.contains("{{"), "a placeholder is left");
            let script = between(html, "<script type=\"module\">", "</script>");
            let style = between(html, "<style>", "</style>");
            let csp = content_security_policy();
            let hash = |t: &str| sha256::base64(&sha256::digest(t.as_bytes()));
            assert!(csp.contains(&format!("'sha256-{}'", hash(script))));
            assert!(csp.contains(&format!("'sha256-{}'", hash(style))));
            assert!(!csp.contains("unsafe"), "{csp}");
            // One script and one style block, nothing fetched.
            assert_eq!(html.matches("<script").count(), 1);
            assert!(!html.contains(" src=") && !html.contains("<link rel=\"stylesheet\""));
        }
        assert_eq!(
            between(&served, "<script type=\"module\">", "</script>"),
            between(&saved, "<script type=\"module\">", "</script>")
        );
        assert!(served.contains("<html lang=\"de\" data-api=\"/api/v1\">"));
        assert!(saved.contains("<html lang=\"en\" data-lang-auto>"));
    }

    #[test]
    fn bundle_scopes_each_module_and_wires_its_imports() {
        let script = bundle(&[
            (
                "a",
                "const hidden = 1;\nexport const shown = hidden + 1;\nexport function f() { return shown; }\n",
            ),
            (
                "b",
                "import { shown, f } from './a.js';\nimport * as a from './a.js';\nexport class C {}\nconst hidden = '</script>';\n",
            ),
        ]);
        assert!(script.contains("const module_a = (() => {"));
        assert!(script.contains("return { shown, f };"));
        assert!(script.contains("const { shown, f } = module_a;"));
        assert!(script.contains("const a = module_a;"));
        assert!(script.contains("return { C };"));
        assert!(!script.contains("export ") && !script.contains("import "));
        assert!(!script.contains("</script"));
    }

    #[test]
    fn the_page_modules_use_only_what_the_bundler_reads() {
        for (name, source) in MODULES {
            for line in source.lines() {
                if line.starts_with("import ") {
                    assert!(
                        line.contains(" from './") && line.ends_with(".js';"),
                        "{name}.js: {line}"
                    );
                }
                let inner = line.trim_start();
                assert!(
                    !(inner.starts_with("import ") || inner.starts_with("export "))
                        || inner == line,
                    "{name}.js: an indented import or export is not bundled: {line}"
                );
            }
        }
    }
}

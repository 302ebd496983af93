//! Joins the page's ES modules into one inline module script.
//!
//! Browsers refuse module imports from `file://`, and the saved page must
//! work from disk, so its modules travel as one script: each module becomes a
//! function scope that returns its exports, and each import reads them from
//! the scope of the module it names. Modules are ordered by their imports, so
//! the list they are given in does not matter.
//!
//! # Why by hand
//!
//! The crates that bundle JavaScript (`swc_bundler`, `oxc`, `rolldown`)
//! parse the whole language and bring a compiler's worth of code to build;
//! the page's modules need three line forms, which are read here exactly:
//!
//! - `import { a, b as c } from './m.js';`
//! - `import * as m from './m.js';`
//! - `export` in front of a top-level `function`, `async function`,
//!   `function*`, `const`, `let` or `class`.
//!
//! Everything else that looks like an import or export (a default export, an
//! export list, a side-effect or bare import, one spread over several lines,
//! an indented one) is refused with the module and line named, as are an
//! import of a module that is not in the set and modules that import each
//! other in a circle. A test bundles the real modules, so a module that
//! strays from these forms fails `cargo test`, not the page.

use std::collections::HashMap;
use std::fmt;

/// Why the modules cannot be joined: the module, the line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleError {
    module: String,
    line: Option<usize>,
    problem: String,
}

impl BundleError {
    fn at(module: &str, line: usize, problem: impl Into<String>) -> Self {
        Self {
            module: module.to_string(),
            line: Some(line),
            problem: problem.into(),
        }
    }

    fn of(module: &str, problem: impl Into<String>) -> Self {
        Self {
            module: module.to_string(),
            line: None,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}.js line {line}: {}", self.module, self.problem),
            None => write!(f, "{}.js: {}", self.module, self.problem),
        }
    }
}

impl std::error::Error for BundleError {}

/// One module read: its body with imports and exports rewritten, the names
/// it exports and the modules it imports.
struct Read<'a> {
    name: &'a str,
    body: String,
    exports: Vec<String>,
    imports: Vec<String>,
}

/// Joins `modules` (name without `.js`, source) into one script.
pub fn bundle(modules: &[(&str, &str)]) -> Result<String, BundleError> {
    let mut read = Vec::with_capacity(modules.len());
    let mut scopes: HashMap<String, &str> = HashMap::new();
    for (name, source) in modules {
        if let Some(other) = scopes.insert(scope(name), name) {
            return Err(BundleError::of(
                name,
                format!("its scope name is taken by {other}.js"),
            ));
        }
        read.push(read_module(name, source)?);
    }
    let order = order(&read)?;
    let mut out = String::new();
    for index in order {
        let module = &read[index];
        out.push_str(&format!(
            "const {} = (() => {{\n{}return {{ {} }};\n}})();\n",
            scope(module.name),
            module.body,
            module.exports.join(", ")
        ));
    }
    Ok(escape_script_end(&out))
}

/// The variable that holds a module's exports: `lang-de` is `module_lang_de`.
fn scope(name: &str) -> String {
    let ident: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("module_{ident}")
}

/// How an import statement can begin; `importance()` is code.
const IMPORT_STARTS: [&str; 5] = ["import ", "import{", "import*", "import'", "import\""];

fn read_module<'a>(name: &'a str, source: &str) -> Result<Read<'a>, BundleError> {
    if source.contains("<!--") {
        // Inside a script element it can switch the HTML parser into a
        // state where a later "<script" swallows the rest of the page.
        return Err(BundleError::of(
            name,
            "\"<!--\" cannot stand in an inline script",
        ));
    }
    let mut module = Read {
        name,
        body: String::with_capacity(source.len()),
        exports: Vec::new(),
        imports: Vec::new(),
    };
    for (index, line) in source.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start();
        let is_import = IMPORT_STARTS.iter().any(|k| trimmed.starts_with(k));
        let is_export = trimmed.starts_with("export ");
        if (is_import || is_export) && trimmed.len() != line.len() {
            return Err(BundleError::at(
                name,
                number,
                "an indented import or export is not read; start it at the line's beginning",
            ));
        }
        if is_import {
            let (what, from) = import(name, number, line["import".len()..].trim())?;
            module
                .body
                .push_str(&format!("const {what} = {};\n", scope(&from)));
            module.imports.push(from);
        } else if let Some(decl) = line.strip_prefix("export ") {
            module.exports.push(export(name, number, decl)?);
            module.body.push_str(decl);
            module.body.push('\n');
        } else {
            module.body.push_str(line);
            module.body.push('\n');
        }
    }
    Ok(module)
}

/// An import's binding, as the left side of a `const`, and the module it
/// names.
fn import(name: &str, line: usize, rest: &str) -> Result<(String, String), BundleError> {
    let fail = |problem: &str| BundleError::at(name, line, problem.to_string());
    let Some((what, from)) = rest.rsplit_once(" from ") else {
        return Err(fail(
            "an import must name what it takes and end in from './module.js'; on one line",
        ));
    };
    let from = from.trim().trim_end_matches(';');
    let module = from
        .strip_prefix("'./")
        .and_then(|m| m.strip_suffix(".js'"))
        .filter(|m| !m.is_empty() && !m.contains('/'))
        .ok_or_else(|| fail("imports come from './module.js', a sibling, in single quotes"))?;
    let what = what.trim();
    if let Some(star) = what.strip_prefix('*') {
        let binding = star.trim_start().strip_prefix("as ").unwrap_or("").trim();
        if !is_identifier(binding) {
            return Err(fail("import * as needs one name"));
        }
        return Ok((binding.to_string(), module.to_string()));
    }
    let names = what
        .strip_prefix('{')
        .and_then(|w| w.strip_suffix('}'))
        .ok_or_else(|| fail("a default import is not read; use { name } or * as name"))?;
    let mut bindings = Vec::new();
    for part in names.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let binding = match part.split_once(" as ") {
            Some((exported, local))
                if is_identifier(exported.trim()) && is_identifier(local.trim()) =>
            {
                format!("{}: {}", exported.trim(), local.trim())
            }
            None if is_identifier(part) => part.to_string(),
            _ => return Err(fail("an imported name must be a name, or name as other")),
        };
        bindings.push(binding);
    }
    if bindings.is_empty() {
        return Err(fail("an import must name what it takes"));
    }
    Ok((format!("{{ {} }}", bindings.join(", ")), module.to_string()))
}

/// The name an `export` line declares.
fn export(name: &str, line: usize, decl: &str) -> Result<String, BundleError> {
    let mut words = decl.split_whitespace();
    let mut word = words.next().unwrap_or("");
    if word == "async" {
        word = words.next().unwrap_or("");
    }
    let declared = match word {
        "function" | "function*" | "const" | "let" | "class" => words.next().unwrap_or(""),
        _ => "",
    };
    let declared = declared.trim_start_matches('*');
    let end = declared
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(declared.len());
    let exported = &declared[..end];
    if !is_identifier(exported) {
        return Err(BundleError::at(
            name,
            line,
            "only export function, const, let or class with one name is read",
        ));
    }
    Ok(exported.to_string())
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The modules in an order where each comes after those it imports; among
/// modules free to go, the one listed first goes first.
fn order(modules: &[Read<'_>]) -> Result<Vec<usize>, BundleError> {
    let index: HashMap<&str, usize> = modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name, i))
        .collect();
    let mut needs: Vec<Vec<usize>> = Vec::with_capacity(modules.len());
    for module in modules {
        let mut deps = Vec::new();
        for import in &module.imports {
            let Some(&dep) = index.get(import.as_str()) else {
                return Err(BundleError::of(
                    module.name,
                    format!("imports {import}.js, which is not one of the page's modules"),
                ));
            };
            deps.push(dep);
        }
        needs.push(deps);
    }
    let mut placed = vec![false; modules.len()];
    let mut out = Vec::with_capacity(modules.len());
    while out.len() < modules.len() {
        let next = (0..modules.len()).find(|&i| !placed[i] && needs[i].iter().all(|&d| placed[d]));
        match next {
            Some(i) => {
                placed[i] = true;
                out.push(i);
            }
            None => {
                let stuck: Vec<&str> = (0..modules.len())
                    .filter(|&i| !placed[i])
                    .map(|i| modules[i].name)
                    .collect();
                return Err(BundleError::of(
                    stuck[0],
                    format!(
                        "modules import each other in a circle: {}",
                        stuck.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// An inline script ends at the first `</script`, in any case, wherever it
/// stands; `<\/` means the same inside a JavaScript string or template.
fn escape_script_end(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut rest = script;
    while let Some(at) = rest.find("</") {
        let after = &rest[at + 2..];
        let closes = after
            .get(..6)
            .is_some_and(|word| word.eq_ignore_ascii_case("script"));
        out.push_str(&rest[..at]);
        out.push_str(if closes { "<\\/" } else { "</" });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fails(modules: &[(&str, &str)]) -> String {
        bundle(modules).unwrap_err().to_string()
    }

    #[test]
    fn scopes_each_module_and_wires_its_imports() {
        let script = bundle(&[
            (
                "b",
                "import { shown, f as g } from './a.js';\nimport * as a from './a.js';\nexport class C {}\nconst hidden = '</script>';\n",
            ),
            (
                "a",
                "const hidden = 1;\nexport const shown = hidden + 1;\nexport function f() { return shown; }\nexport async function h() {}\nexport function* gen() {}\nexport let later = 2;\n",
            ),
        ])
        .unwrap();
        // Ordered by imports, not by the list: a before b.
        let a = script.find("const module_a = (() => {").unwrap();
        let b = script.find("const module_b = (() => {").unwrap();
        assert!(a < b, "{script}");
        assert!(script.contains("return { shown, f, h, gen, later };"));
        assert!(script.contains("const { shown, f: g } = module_a;"));
        assert!(script.contains("const a = module_a;"));
        assert!(script.contains("return { C };"));
        assert!(!script.contains("export ") && !script.contains("import "));
        assert!(!script.contains("</script"));
    }

    #[test]
    fn the_end_of_a_script_is_escaped_in_any_case() {
        let script = bundle(&[("a", "const s = '</SCRIPT></Script ></p>';\n")]).unwrap();
        assert!(
            script.contains(r"const s = '<\/SCRIPT><\/Script ></p>';"),
            "{script}"
        );
        assert_eq!(escape_script_end("a</scrip"), "a</scrip");
        assert_eq!(escape_script_end("</"), "</");
    }

    #[test]
    fn names_with_a_hyphen_get_a_scope_of_their_own() {
        let script = bundle(&[
            ("lang-de", "export const WORDS = 1;\n"),
            ("app", "import { WORDS } from './lang-de.js';\n"),
        ])
        .unwrap();
        assert!(script.contains("const { WORDS } = module_lang_de;"));
        assert!(
            fails(&[("a-b", ""), ("a_b", "")])
                .contains("a_b.js: its scope name is taken by a-b.js")
        );
    }

    #[test]
    fn refuses_what_it_does_not_read_and_says_where() {
        let cases = [
            ("export default 1;\n", "line 1: only export function"),
            ("export { a };\n", "line 1: only export function"),
            ("export * from './x.js';\n", "line 1: only export function"),
            (
                "const a = 1;\n  export const b = 2;\n",
                "line 2: an indented import or export",
            ),
            (
                "\timport { a } from './x.js';\n",
                "line 1: an indented import",
            ),
            (
                "import x from './x.js';\n",
                "line 1: a default import is not read",
            ),
            (
                "import './x.js';\n",
                "line 1: an import must name what it takes",
            ),
            (
                "import {\n  a,\n} from './x.js';\n",
                "line 1: an import must name",
            ),
            (
                "import { a } from \"./x.js\";\n",
                "line 1: imports come from './module.js'",
            ),
            (
                "import { a } from './lib/x.js';\n",
                "line 1: imports come from",
            ),
            ("import { a } from 'x';\n", "line 1: imports come from"),
            (
                "import {  } from './x.js';\n",
                "line 1: an import must name what it takes",
            ),
            (
                "import { a-b } from './x.js';\n",
                "line 1: an imported name must be a name",
            ),
            (
                "import * as  from './x.js';\n",
                "line 1: import * as needs one name",
            ),
            (
                "const s = '<!--';\n",
                "\"<!--\" cannot stand in an inline script",
            ),
        ];
        for (source, expected) in cases {
            let message = fails(&[("x", "export const a = 1;\n"), ("m", source)]);
            assert!(message.starts_with("m.js"), "{source:?}: {message}");
            assert!(message.contains(expected), "{source:?}: {message}");
        }
    }

    #[test]
    fn words_that_begin_like_import_are_code() {
        let script = bundle(&[(
            "m",
            "importance();\nexported = 1;\nconst x = { import: 1 };\n",
        )])
        .unwrap();
        assert!(script.contains("importance();\nexported = 1;\n"));
    }

    #[test]
    fn refuses_an_unknown_module_and_a_circle() {
        assert_eq!(
            fails(&[("a", "import { b } from './nope.js';\n")]),
            "a.js: imports nope.js, which is not one of the page's modules"
        );
        assert_eq!(
            fails(&[
                ("c", ""),
                ("a", "import { b } from './b.js';\nexport const a = 1;\n"),
                ("b", "import { a } from './a.js';\nexport const b = 1;\n"),
            ]),
            "a.js: modules import each other in a circle: a, b"
        );
    }
}

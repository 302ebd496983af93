//! The documentation against the code: the generated reference pages are
//! what `snowflake reference` writes now, every relative link in the
//! Markdown files leads to a file and a heading that exist, and the
//! guide's command lines run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::command::stdout_of;
use crate::support::scratch::Scratch;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each generated page equals what the command writes; `UPDATE_DOCS=1`
/// writes them instead, for a change that means to move them.
#[test]
fn the_reference_pages_are_what_the_command_writes() {
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for page in ["cli", "http-api", "layouts"] {
        let fresh = stdout_of(&["reference", page]);
        let path = root().join(format!("docs/reference/{page}.md"));
        if update {
            std::fs::write(&path, &fresh).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        if kept != fresh {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale reference pages: {stale:?}; run UPDATE_DOCS=1 cargo test -p snowflake-cli --test cli docs::"
    );
}

/// Every Markdown file the project keeps, outside generated trees.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![];
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.')
                    && !["target", "node_modules", "artifacts"].contains(&name.as_str())
                {
                    stack.push(path);
                }
            } else if name.ends_with(".md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The anchors of a Markdown file's headings, as GitHub makes them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let anchor: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                ' ' => Some('-'),
                _ => None,
            })
            .collect();
        seen.insert(anchor);
    }
    seen
}

/// The targets of the inline links `[text](target)` in `text`, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = vec![];
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Code spans hold text, not links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading_that_exist() {
    let mut broken = vec![];
    let files = markdown_files();
    assert!(files.len() > 10, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target} (no such file)", file.display()));
                continue;
            }
            if !anchor.is_empty() && linked.extension().is_some_and(|e| e == "md") {
                let heads = anchors(&std::fs::read_to_string(&linked).unwrap());
                if !heads.contains(anchor) {
                    broken.push(format!("{}: {target} (no such heading)", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The `snowflake` lines of the README's and the command-line guide's
/// shell examples, whole (comments cut), as a reader would paste them:
/// each must succeed. Lines that need what a test has not (a server, a
/// database, a file of IDs, a key) are the ones that pipe, redirect, or
/// name such a thing, and are left out.
#[test]
fn the_guides_command_lines_run() {
    let scratch = Scratch::new();
    let binary = assert_cmd::cargo::cargo_bin("snowflake");
    let mut ran = 0;
    for page in ["README.md", "docs/command-line.md"] {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        let mut in_sh = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_sh = line == "```sh";
                continue;
            }
            let command = line.split("  #").next().unwrap_or("").trim();
            let needs_more = ["|", "<", ">", "/var/", "serve", "--state-file", "cargo "]
                .iter()
                .any(|s| command.contains(s));
            if !in_sh || !command.starts_with("snowflake ") || needs_more {
                continue;
            }
            let args: Vec<&str> = command.split_whitespace().skip(1).collect();
            let output = std::process::Command::new(&binary)
                .args(&args)
                .current_dir(scratch.path())
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{page}: `{command}` failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} command lines ran");
}

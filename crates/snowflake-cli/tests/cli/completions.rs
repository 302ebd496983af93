//! `snowflake completions` and `snowflake man`, checked by the programs that
//! read them: each completion script by its shell (bash, zsh, fish; Debian
//! has no PowerShell), the man page by `man` and `groff`. bash is on every
//! Debian machine; `scripts/sql-test` installs zsh, fish, man and groff.

use std::process::Command;

use crate::support::{Scratch, path_arg, stderr_of, stdout_of};

/// The subcommands, as `snowflake --help` lists them, so that a new one is
/// checked without touching this file.
fn subcommands() -> Vec<String> {
    let help = stdout_of(&["--help"]);
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    for expected in ["compose", "decode", "sql", "completions", "man"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    names
}

/// The script in a file in `dir`, for the shell to read; its path.
fn script_file(dir: &Scratch, shell: &str) -> String {
    let text = stdout_of(&["completions", shell]);
    assert!(!text.trim().is_empty(), "{shell}: empty script");
    path_arg(&dir.file(&format!("snowflake.{shell}"), &text)).to_owned()
}

/// Runs a program, failing with what it said.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program} ({e}): run scripts/sql-test, which installs it")
        });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} {args:?} failed:\n{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bash_reads_the_script_and_completes_subcommands_and_dialects() {
    let dir = Scratch::new();
    let path = &script_file(&dir, "bash");
    run("bash", &["-n", path]);
    let complete = |words: &str| {
        let cword = words.split(' ').count() - 1;
        run(
            "bash",
            &[
                "-c",
                &format!(
                    "source {path}; COMP_WORDS=({words}); COMP_CWORD={cword}; \
                     _snowflake snowflake \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; \
                     printf '%s\\n' \"${{COMPREPLY[@]}}\""
                ),
            ],
        )
    };
    let offered = complete("snowflake ''");
    for name in subcommands() {
        assert!(offered.lines().any(|l| l == name), "{name} in {offered}");
    }
    let dialects = complete("snowflake sql --dialect ''");
    assert_eq!(dialects.lines().collect::<Vec<_>>(), ["postgres", "mysql"]);
    // The text forms come from the core's list, on every command that
    // takes --format.
    let forms: Vec<&str> = snowflake::TextForm::ALL.iter().map(|f| f.name()).collect();
    for command in ["decode", "compose", "generate", "mask", "unmask", "audit"] {
        let offered = complete(&format!("snowflake {command} --format ''"));
        assert_eq!(offered.lines().collect::<Vec<_>>(), forms, "{command}");
    }
    let shells = complete("snowflake completions ''");
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(shells.lines().any(|l| l == shell), "{shell} in {shells}");
    }
}

#[test]
fn zsh_reads_the_script() {
    let dir = Scratch::new();
    let path = &script_file(&dir, "zsh");
    run("zsh", &["-n", path]);
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("#compdef snowflake"),
        "zsh finds it by its first line"
    );
}

#[test]
fn fish_reads_the_script_and_completes_subcommands() {
    let dir = Scratch::new();
    let path = &script_file(&dir, "fish");
    run("fish", &["--no-execute", path]);
    let offered = run(
        "fish",
        &["-c", &format!("source {path}; complete -C 'snowflake '")],
    );
    for name in subcommands() {
        assert!(
            offered
                .lines()
                .any(|l| l.split('\t').next() == Some(name.as_str())),
            "{name} in {offered}"
        );
    }
    let dialects = run(
        "fish",
        &[
            "-c",
            &format!("source {path}; complete -C 'snowflake sql --dialect '"),
        ],
    );
    assert!(
        dialects.contains("postgres") && dialects.contains("mysql"),
        "{dialects}"
    );
}

#[test]
fn powershell_script_names_every_subcommand() {
    // No PowerShell in Debian to parse it: check what can be checked.
    let text = stdout_of(&["completions", "powershell"]);
    assert!(text.contains("Register-ArgumentCompleter"), "{text}");
    for name in subcommands() {
        assert!(text.contains(&format!("'{name}'")), "{name}");
    }
}

#[test]
fn unknown_shell_is_refused_with_exit_2() {
    let err = stderr_of(&["completions", "tcsh"], 2);
    assert!(
        err.contains("tcsh") && err.contains("bash, zsh, fish, powershell"),
        "{err}"
    );
}

#[test]
fn man_renders_the_page_with_every_subcommand() {
    let roff = stdout_of(&["man"]);
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH OPTIONS",
        ".SH \"SNOWFLAKE SQL\"",
    ] {
        assert!(roff.contains(section), "{section}");
    }
    let dir = Scratch::new();
    let roff_file = dir.file("snowflake.1", &roff);
    let path = path_arg(&roff_file);
    // groff's own warnings, all of them, on a page rendered for nobody.
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z", path])
        .output()
        .expect("groff is not installed: run scripts/sql-test, which installs it");
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && warnings.is_empty(), "{warnings}");
    let page = Command::new("man")
        .args(["-l", path])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man is not installed: run scripts/sql-test, which installs it");
    assert!(
        page.status.success(),
        "{}",
        String::from_utf8_lossy(&page.stderr)
    );
    let text = String::from_utf8(page.stdout).unwrap();
    assert!(text.contains("snowflake - "), "the NAME line: {text}");
    // A section for each subcommand, with its synopsis and options.
    for name in subcommands() {
        let heading = format!("SNOWFLAKE {}", name.to_uppercase());
        assert!(text.contains(&heading), "{heading} in {text}");
    }
    // The forms of --format, listed after it from the core's list.
    let decode = &text[text.find("SNOWFLAKE DECODE").unwrap()..];
    let format = &decode[decode.find("--format <FORM>").unwrap()..];
    let values = &format[format
        .find("Possible values:")
        .expect("no values after --format")..];
    let listed: Vec<&str> = values
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take_while(|l| l.starts_with('•'))
        .map(|l| l.trim_start_matches('•').trim())
        .collect();
    let forms: Vec<&str> = snowflake::TextForm::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(listed, forms, "the man page's values of --format");
    let sql = &text[text.find("SNOWFLAKE SQL").unwrap()..];
    for part in [
        "Synopsis",
        "Options",
        "--dialect <DIALECT>",
        "--prefix <NAME>",
        "postgres",
    ] {
        assert!(sql.contains(part), "{part} in {sql}");
    }
}

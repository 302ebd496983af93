//! What shells and `man` know about the command: completion scripts and the
//! manual page, both drawn from the clap definition so they cannot drift
//! from it.

use std::io;

use clap::CommandFactory;

use crate::args::{Cli, Shell};

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> String {
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
    };
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "snowflake", &mut out);
    // Built from our own UTF-8 help texts.
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page in roff: the command, then a section for each
/// subcommand with its synopsis and options.
///
/// clap_mangen writes one page per command and points from the first to
/// `snowflake-sql(1)` and the rest; one page that holds them all is easier
/// to install and to read, so the subcommands are sections of this one.
pub fn man_page() -> io::Result<String> {
    let mut command = Cli::command();
    // Gives every subcommand its full name, `snowflake cluster status`.
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    for sub in subcommands(&command) {
        let name = sub.get_bin_name().unwrap_or_else(|| sub.get_name());
        out.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let man = clap_mangen::Man::new(sub.clone());
        let mut part = Vec::new();
        man.render_description_section(&mut part)?;
        man.render_synopsis_section(&mut part)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut part)?;
        }
        // Their own section headings become subsections of this one.
        for line in String::from_utf8_lossy(&part).lines() {
            match line.strip_prefix(".SH ") {
                Some("DESCRIPTION") => {}
                Some(heading) => {
                    let heading = heading.trim_matches('"');
                    let (first, rest) = heading.split_at(1.min(heading.len()));
                    let heading = format!("{first}{}", rest.to_lowercase());
                    out.extend_from_slice(format!(".SS {heading}\n").as_bytes());
                }
                None => {
                    out.extend_from_slice(line.as_bytes());
                    out.push(b'\n');
                }
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Every subcommand, depth first, with those that only group others left
/// out (`cluster` holds `cluster status`), and without `help`.
fn subcommands(command: &clap::Command) -> Vec<&clap::Command> {
    let mut all = Vec::new();
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        if sub.has_subcommands() {
            all.extend(subcommands(sub));
        } else {
            all.push(sub);
        }
    }
    all
}

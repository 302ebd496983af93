//! What shells and `man` know about the command: completion scripts and the
//! manual page, both drawn from the clap definition so they cannot drift
//! from it.

use std::io;

use clap::CommandFactory;

use crate::args::Cli;

/// The shells `snowflake completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

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

/// The manual page in roff: the command, its options and its subcommands.
pub fn man_page() -> io::Result<String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

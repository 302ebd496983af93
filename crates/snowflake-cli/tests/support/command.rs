//! The `snowflake` binary with a clean environment, and what its runs print.
//!
//! Every setting the command reads from the environment is named
//! `SNOWFLAKE_*` (clap's `env = "..."` attributes in `src/args.rs`, and
//! `SNOWFLAKE_ETCD_PASSWORD`), so every such variable is removed from the
//! child's environment: a developer's shell, or a variable a new option
//! starts to read, cannot change a test. A test that means to give one sets
//! it on the command after.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use assert_cmd::assert::Assert;

/// The prefix of every environment variable the command reads.
const PREFIX: &[u8] = b"SNOWFLAKE_";

fn is_setting(name: &OsStr) -> bool {
    name.as_bytes().starts_with(PREFIX)
}

/// The binary as a plain process, for a child that runs while the test
/// talks to it (a server, a long `generate`), its environment cleaned.
pub fn command() -> std::process::Command {
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("snowflake"));
    for (name, _) in std::env::vars_os().filter(|(name, _)| is_setting(name)) {
        command.env_remove(name);
    }
    command
}

/// Starts `command` with its stdout and stderr piped to the test.
pub fn spawn_piped(command: &mut std::process::Command) -> std::process::Child {
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The binary under `assert_cmd`, its environment cleaned.
pub fn snowflake() -> assert_cmd::Command {
    assert_cmd::Command::from_std(command())
}

/// What a run printed, as text: `assert.stdout_text()`.
pub trait Printed {
    /// Its standard output; it must be UTF-8.
    fn stdout_text(&self) -> String;
    /// Its standard error; it must be UTF-8.
    fn stderr_text(&self) -> String;
}

impl Printed for Assert {
    fn stdout_text(&self) -> String {
        String::from_utf8(self.get_output().stdout.clone()).unwrap()
    }

    fn stderr_text(&self) -> String {
        String::from_utf8(self.get_output().stderr.clone()).unwrap()
    }
}

/// What a successful run printed; the run must exit 0.
pub fn stdout_of(args: &[&str]) -> String {
    snowflake().args(args).assert().success().stdout_text()
}

/// What a refused run said: it must exit with `code` and print nothing on
/// stdout. Its stderr.
pub fn stderr_of(args: &[&str], code: i32) -> String {
    snowflake()
        .args(args)
        .assert()
        .code(code)
        .stdout("")
        .stderr_text()
}

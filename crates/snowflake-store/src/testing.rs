//! Helpers for the store's tests, its unit tests' and `tests/state_file.rs`'s:
//! directories, state paths, planted links, pipes, time limits and what a
//! message says.

use std::path::{Path, PathBuf};

/// Makes a FIFO at `path` with the system's `mkfifo`, as this crate takes no libc.
#[cfg(unix)]
pub(crate) fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "this test needs mkfifo (coreutils) to make {}",
        path.display()
    );
}

/// Asserts that `err`'s message says `what`, and shows the message if not.
#[track_caller]
pub(crate) fn assert_says(err: &impl std::fmt::Display, what: &str) {
    let message = err.to_string();
    assert!(message.contains(what), "{message:?} does not say {what:?}");
}

/// Runs `f` on a thread and fails the test if it has not returned in time,
/// so that a hang is a failure and not a stuck test run.
pub(crate) fn within_seconds<T: Send + 'static>(
    secs: u64,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .expect("it did not return in time: it blocks")
}

/// A fresh directory for one test, removed when the test passes: every
/// test's setup and teardown written once. A failed test leaves its
/// directory to be looked at; the next run starts it afresh.
pub(crate) fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("snowflake-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A fresh directory for one test (see [`temp_dir`]) and the path of a state
/// file in it, not made yet.
pub(crate) fn state_file(name: &str) -> (TempDir, PathBuf) {
    let dir = temp_dir(name);
    let path = dir.join("mark");
    (dir, path)
}

/// What the file that planted links point at holds: a test checks that it
/// is never written through one.
#[cfg(unix)]
pub(crate) const KEPT: &str = "keep me\n";

/// A file in `dir` holding [`KEPT`], for planted links to point at.
#[cfg(unix)]
pub(crate) fn kept_file(dir: &Path) -> PathBuf {
    let target = dir.join("precious");
    std::fs::write(&target, KEPT).unwrap();
    target
}

/// A symbolic link at `dir/name` to `to` (which need not exist), as
/// someone else might plant it; its path.
#[cfg(unix)]
pub(crate) fn planted_link(dir: &Path, name: &str, to: &Path) -> PathBuf {
    let link = dir.join(name);
    std::os::unix::fs::symlink(to, &link).unwrap();
    link
}

/// See [`temp_dir`].
pub(crate) struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            std::fs::remove_dir_all(&self.0).unwrap();
        }
    }
}

//! Helpers for the store's tests: pipes and time limits.

use std::path::Path;

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

/// A fresh directory for one test.
pub(crate) fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snowflake-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

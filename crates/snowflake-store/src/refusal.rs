//! The words for a state file that turns out to be another process's: its
//! lock held by another, or the file taken from under this one.

use std::path::Path;

use snowflake::Error;

/// Another process holds the lock on `lock`; `pid` is the process ID it
/// recorded there, if it has yet.
pub(crate) fn locked(path: &Path, lock: &Path, pid: Option<u32>) -> Error {
    let holder = match pid {
        Some(pid) => format!("process {pid}"),
        None => "another process, whose ID it has not recorded yet".to_string(),
    };
    Error::store_in_use(format!(
        "{} is in use by {holder}, which holds the lock on {}; one state file serves one \
         generator at a time",
        path.display(),
        lock.display()
    ))
}

/// Another process wrote the state file or took its lock file (`what` says
/// which). At start, while the mark was waited out, the generator must not
/// start (kind `StoreInUse`); later, since the last write, the store stops
/// for good (kind `Store`, needing an operator).
pub(crate) fn taken(path: &Path, lock: &Path, what: &str, at_start: bool) -> Error {
    let (path, lock) = (path.display(), lock.display());
    if at_start {
        Error::store_in_use(format!(
            "{path} is in use by another process: {what} while this one waited for its mark to \
             pass; refusing to start (one state file serves one generator at a time, and {lock} \
             must never be removed while one runs)"
        ))
    } else {
        Error::store_stopped(format!(
            "{path} may be in use by another process: {what}; to keep IDs unique this generator \
             writes no more marks there and issues no ID past the last one written. Restart it \
             once one process uses the file, and never remove {lock} while one runs"
        ))
    }
}

//! A scratch directory of a test's own, removed when it is dropped: also
//! when an assertion fails half-way, which a `remove_dir_all` at the end of
//! a test never sees.

use std::path::{Path, PathBuf};

/// A new, empty directory under the system's temporary directory.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("snowflake-cli-test-")
                .tempdir()
                .unwrap(),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where `name` would be in it (nothing is made).
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A file `name` in it holding `text`.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// A path as the `&str` an argument list takes; the scratch paths are
/// UTF-8.
pub fn path_arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

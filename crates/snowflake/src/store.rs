//! Where a generator keeps its high-water mark across restarts.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Durable storage for a generator's high-water mark: the highest Unix
/// millisecond it may issue IDs up to.
///
/// The generator writes a mark *before* it issues any ID in the window the
/// mark covers, so after a crash or restart every ID issued before lies at or
/// below the stored mark. A store must not return from [`MarkStore::save`]
/// until the mark is durable. The cluster mode keeps its mark in etcd; this
/// crate ships [`FileMarkStore`].
///
/// ```
/// use snowflake::{FileMarkStore, MarkStore};
///
/// let dir = std::env::temp_dir().join(format!("snowflake-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let store = FileMarkStore::new(dir.join("mark"));
/// assert_eq!(store.load()?, None);
/// store.save(1_700_000_001_000)?;
/// assert_eq!(store.load()?, Some(1_700_000_001_000));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), snowflake::Error>(())
/// ```
pub trait MarkStore: Send + Sync {
    /// The stored mark, or `None` when nothing was stored yet.
    fn load(&self) -> Result<Option<i64>, Error>;
    /// Stores the mark durably; returns only once it would survive a crash.
    fn save(&self, mark_ms: i64) -> Result<(), Error>;
}

/// A [`MarkStore`] in a small text file, replaced atomically: written to a
/// temporary file beside it, fsynced, renamed over it, and the directory
/// fsynced, so a crash leaves the old mark or the new one, never half of one.
#[derive(Debug, Clone)]
pub struct FileMarkStore {
    path: PathBuf,
}

impl FileMarkStore {
    /// A store at `path`; the file is created on the first save.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileMarkStore { path: path.into() }
    }

    /// Where the mark lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn fail(&self, what: &str, err: impl core::fmt::Display) -> Error {
        Error::store(format!("{what} {}: {err}", self.path.display()))
    }
}

impl MarkStore for FileMarkStore {
    fn load(&self) -> Result<Option<i64>, Error> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(self.fail("cannot read", err)),
        };
        let line = text.trim();
        line.parse::<i64>().map(Some).map_err(|_| {
            self.fail(
                "cannot use",
                format_args!("it holds {line:?}, not a mark in Unix milliseconds"),
            )
        })
    }

    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let write = || -> std::io::Result<()> {
            let mut file = File::create(&tmp)?;
            writeln!(file, "{mark_ms}")?;
            file.sync_all()?;
            fs::rename(&tmp, &self.path)?;
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                // The rename is durable only once the directory is.
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|err| self.fail("cannot write", err))
    }
}

impl<S: MarkStore + ?Sized> MarkStore for std::sync::Arc<S> {
    fn load(&self) -> Result<Option<i64>, Error> {
        (**self).load()
    }

    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        (**self).save(mark_ms)
    }
}

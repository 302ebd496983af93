//! [`FileMarkStore`]: the mark in a one-line file, one process at a time.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::MarkStore;
use super::format::{self, Stored};
use super::guard;
use crate::error::{Error, Repr};
use crate::layout::Layout;

/// A [`MarkStore`] in a small text file, for one process at a time.
///
/// [`open`](MarkStore::open), which the generator's builder calls, takes an
/// exclusive lock on a lock file beside the state file (`mark.lock` beside
/// `mark`) and holds it until the store is dropped with its generator; a
/// second store on the same file, in this process or another, is refused
/// with [`ErrorKind::StoreInUse`](crate::error::ErrorKind::StoreInUse) and the
/// holder's process ID, which the lock file records. The lock file stays
/// behind: removing it could let two processes lock two different files.
///
/// The file is one line that names the layout it belongs to and carries a
/// checksum:
///
/// ```text
/// snowflake-mark v2 layout=time:41,datacenter:5,machine:5,sequence:12 epoch=1288834974657 tick=1 mark=1700000000999 crc=…
/// ```
///
/// A file that is empty, cut short, corrupt, of another layout, or whose mark
/// lies outside the layout's time is refused with an error naming the file
/// and the fault, never taken for "nothing issued". The bare number that
/// earlier builds wrote is read once and rewritten in this form.
///
/// Each save writes a new private (0600) file under a name of its own beside
/// the state file, fsyncs it, renames it over the state file and fsyncs the
/// directory, so a crash leaves the old mark or the new one, never half of
/// one. A symbolic link, directory or FIFO at the state path or the lock path
/// is refused without being followed or opened: nothing outside the state
/// file and its lock file is written.
///
/// ```
/// use snowflake::{ErrorKind, FileMarkStore, Layout, MarkStore};
///
/// let dir = std::env::temp_dir().join(format!("snowflake-file-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let store = FileMarkStore::new(dir.join("mark"));
/// store.open(&Layout::twitter())?;
/// store.save(1_700_000_000_999)?;
/// assert!(std::fs::read_to_string(store.path()).unwrap().starts_with("snowflake-mark v2 "));
///
/// let second = FileMarkStore::new(dir.join("mark"));
/// let err = second.open(&Layout::twitter()).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::StoreInUse);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Debug)]
pub struct FileMarkStore {
    path: PathBuf,
    opened: Mutex<Option<Opened>>,
}

/// What `open` established: the lock, held for the store's life, and the
/// layout every load is checked against and every save names.
#[derive(Debug)]
struct Opened {
    _lock: File,
    layout: Layout,
}

impl FileMarkStore {
    /// A store at `path`; nothing is opened or created until
    /// [`open`](MarkStore::open), and the state file not until the first save.
    ///
    /// ```
    /// let store = snowflake::FileMarkStore::new("/var/lib/snowflake/mark");
    /// assert_eq!(store.path(), std::path::Path::new("/var/lib/snowflake/mark"));
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileMarkStore {
            path: path.into(),
            opened: Mutex::new(None),
        }
    }

    /// Where the mark lives.
    ///
    /// ```
    /// let store = snowflake::FileMarkStore::new("mark");
    /// assert_eq!(store.path(), std::path::Path::new("mark"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock file beside the state file: its name with `.lock` added.
    ///
    /// ```
    /// let store = snowflake::FileMarkStore::new("/var/lib/snowflake/mark");
    /// assert_eq!(store.lock_path(), std::path::Path::new("/var/lib/snowflake/mark.lock"));
    /// ```
    pub fn lock_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    fn fail(&self, what: &str, err: impl core::fmt::Display) -> Error {
        Error::store(format!("{what} {}: {err}", self.path.display()))
    }

    fn opened(&self) -> Result<std::sync::MutexGuard<'_, Option<Opened>>, Error> {
        self.opened.lock().map_err(|_| {
            self.fail(
                "cannot use",
                "a panic while it was in use poisoned its lock",
            )
        })
    }

    fn read(&self, layout: Option<&Layout>) -> Result<Option<Stored>, Error> {
        let Some(mut file) = guard::open_existing(&self.path)? else {
            return Ok(None);
        };
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|err| self.fail("cannot read", err))?;
        format::decode(&text, layout)
            .map(Some)
            .map_err(|problem| self.fail("cannot use", problem))
    }

    fn write(&self, layout: &Layout, mark_ms: i64) -> Result<(), Error> {
        let (tmp, mut file) = guard::create_temp(&self.path)?;
        let written = file
            .write_all(format::encode(layout, mark_ms).as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| fs::rename(&tmp, &self.path));
        if let Err(err) = written {
            // Best effort: the failure being reported matters more.
            let _ = fs::remove_file(&tmp);
            return Err(self.fail("cannot write", err));
        }
        // The rename is durable only once the directory is.
        guard::sync_dir(&self.path).map_err(|err| self.fail("cannot sync the directory of", err))
    }

    fn lock(&self) -> Result<File, Error> {
        let lock_path = self.lock_path();
        let mut file = guard::open_lock(&lock_path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                // The holder may not have written its PID yet: then it is unknown.
                let _ = file.read_to_string(&mut text);
                return Err(Error::new(Repr::StoreInUse {
                    path: self.path.display().to_string(),
                    lock: lock_path.display().to_string(),
                    pid: text.trim().parse().ok(),
                }));
            }
            Err(std::fs::TryLockError::Error(err)) => {
                return Err(Error::store(format!(
                    "cannot lock {}: {err}",
                    lock_path.display()
                )));
            }
        }
        let record = file
            .set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        record.map_err(|err| {
            Error::store(format!("cannot write to {}: {err}", lock_path.display()))
        })?;
        Ok(file)
    }
}

impl MarkStore for FileMarkStore {
    /// Refuses anything but a regular file at the state path, takes the lock
    /// (or says which process holds it), and checks the file against
    /// `layout`, rewriting a bare number from an earlier build in the current
    /// form. Opening again for the same layout does nothing.
    fn open(&self, layout: &Layout) -> Result<(), Error> {
        let mut opened = self.opened()?;
        if let Some(held) = opened.as_ref() {
            let same = |l: &Layout| (l.spec(), l.epoch_ms(), l.tick_ms());
            if same(&held.layout) == same(layout) {
                return Ok(());
            }
            return Err(self.fail(
                "cannot open",
                format_args!("it is already open for layout {}", held.layout.spec()),
            ));
        }
        // Before the lock file is made: a refused state path leaves no trace.
        guard::regular_or_absent(&self.path)?;
        let lock = self.lock()?;
        let stored = self.read(Some(layout))?;
        if let Some(Stored {
            mark_ms,
            plain: true,
        }) = stored
        {
            self.write(layout, mark_ms)?;
        }
        *opened = Some(Opened {
            _lock: lock,
            layout: layout.clone(),
        });
        Ok(())
    }

    /// Before [`open`](MarkStore::open), checks only the file's own form and
    /// checksum; after it, also that the file belongs to the layout and its
    /// mark lies within the layout's time.
    fn load(&self) -> Result<Option<i64>, Error> {
        let layout = self.opened()?.as_ref().map(|held| held.layout.clone());
        Ok(self.read(layout.as_ref())?.map(|stored| stored.mark_ms))
    }

    /// Needs [`open`](MarkStore::open) first: the file names its layout, and
    /// only the lock's holder may write it.
    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        let opened = self.opened()?;
        let Some(held) = opened.as_ref() else {
            return Err(self.fail(
                "cannot write",
                "the store is not open; open it for a layout first (a generator's builder does)",
            ));
        };
        self.write(&held.layout, mark_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::store::testing::temp_dir;
    #[cfg(unix)]
    use crate::store::testing::{mkfifo, within_seconds};

    const MARK: i64 = 1_700_000_000_999;

    fn opened(path: &Path) -> FileMarkStore {
        let store = FileMarkStore::new(path);
        store.open(&Layout::twitter()).unwrap();
        store
    }

    /// The error that opening a store on `path` for twitter gives.
    fn refusal(path: &Path) -> Error {
        FileMarkStore::new(path)
            .open(&Layout::twitter())
            .unwrap_err()
    }

    #[test]
    fn saves_and_loads_in_the_new_form_privately() {
        let dir = temp_dir("roundtrip");
        let path = dir.join("mark");
        let store = opened(&path);
        assert_eq!(store.load().unwrap(), None);
        store.save(MARK).unwrap();
        assert_eq!(store.load().unwrap(), Some(MARK));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            format::encode(&Layout::twitter(), MARK)
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Only the state file and its lock file are left: no temporary files.
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["mark", "mark.lock"]);
        assert_eq!(
            fs::read_to_string(store.lock_path()).unwrap(),
            format!("{}\n", std::process::id())
        );
        drop(store);
        assert_eq!(opened(&path).load().unwrap(), Some(MARK));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_second_store_on_the_same_file_is_refused_until_the_first_is_dropped() {
        let dir = temp_dir("twice");
        let path = dir.join("mark");
        let first = opened(&path);
        let err = refusal(&path);
        assert_eq!(err.kind(), ErrorKind::StoreInUse);
        assert_eq!(
            err.to_string(),
            format!(
                "high-water mark store: {} is in use by process {}, which holds the lock on {}; \
                 one state file serves one generator at a time",
                path.display(),
                std::process::id(),
                first.lock_path().display()
            )
        );
        first.save(MARK).unwrap();
        drop(first);
        assert_eq!(opened(&path).load().unwrap(), Some(MARK));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn saving_needs_open_and_one_store_serves_one_layout() {
        let dir = temp_dir("unopened");
        let path = dir.join("mark");
        let store = FileMarkStore::new(&path);
        let err = store.save(MARK).unwrap_err();
        assert!(err.to_string().contains("the store is not open"), "{err}");
        assert!(!path.exists());
        store.open(&Layout::twitter()).unwrap();
        store.open(&Layout::twitter()).unwrap();
        let err = store.open(&Layout::discord()).unwrap_err();
        assert!(
            err.to_string().contains("already open for layout time:41"),
            "{err}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_torn_or_corrupt_file_is_refused_naming_it() {
        let dir = temp_dir("torn");
        let path = dir.join("mark");
        let full = format::encode(&Layout::twitter(), MARK);
        // A torn write: the file holds the first part of a mark.
        for (text, fault) in [
            (
                &full[..full.len() / 2],
                "a write was cut short (a torn write)",
            ),
            ("", "it is empty"),
            ("garbage\n", "it is not a mark file"),
            (&full.replace("mark=17", "mark=27"), "it is corrupt"),
        ] {
            fs::write(&path, text).unwrap();
            let err = refusal(&path);
            assert_eq!(err.kind(), ErrorKind::Store);
            let message = err.to_string();
            assert!(
                message.contains(&format!("cannot use {}: ", path.display())),
                "{message}"
            );
            assert!(message.contains(fault), "{message}");
            // Refused, not repaired: the file is as it was.
            assert_eq!(fs::read_to_string(&path).unwrap(), text);
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_of_another_layout_or_out_of_its_time_is_refused() {
        let dir = temp_dir("foreign");
        let path = dir.join("mark");
        let twitter = Layout::twitter();
        let discord = Layout::discord();
        for (text, fault) in [
            (
                format::encode(&discord, MARK),
                "belongs to layout time:42,worker:5,process:5,increment:12",
            ),
            (
                format::encode(&twitter, twitter.epoch_ms() - 1),
                "before the layout's epoch",
            ),
            ("1000\n".into(), "before the layout's epoch"),
            (
                format::encode(&twitter, twitter.last_timestamp_ms() + 1),
                "after the last time the layout can encode",
            ),
        ] {
            fs::write(&path, &text).unwrap();
            let err = refusal(&path);
            assert!(err.to_string().contains(fault), "{err}");
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
        }
        // Loading without open checks only the file itself.
        fs::write(&path, format::encode(&discord, MARK)).unwrap();
        assert_eq!(FileMarkStore::new(&path).load().unwrap(), Some(MARK));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bare_number_from_an_earlier_build_is_read_once_and_rewritten() {
        let dir = temp_dir("plain");
        let path = dir.join("mark");
        fs::write(&path, format!("{MARK}\n")).unwrap();
        let store = opened(&path);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            format::encode(&Layout::twitter(), MARK)
        );
        assert_eq!(store.load().unwrap(), Some(MARK));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_at_the_state_path_is_refused() {
        let dir = temp_dir("dir");
        let path = dir.join("mark");
        fs::create_dir(&path).unwrap();
        let err = refusal(&path);
        assert!(err.to_string().contains("it is a directory"), "{err}");
        assert!(!dir.join("mark.lock").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_planted_beside_the_state_file_are_never_followed() {
        use std::os::unix::fs::symlink;
        let dir = temp_dir("links");
        let target = dir.join("precious");
        fs::write(&target, "keep me\n").unwrap();
        let path = dir.join("mark");

        // At the state path: refused, no lock file made.
        symlink(&target, &path).unwrap();
        let err = refusal(&path);
        assert_eq!(err.kind(), ErrorKind::Store);
        assert_eq!(
            err.to_string(),
            format!(
                "high-water mark store: refusing to use {}: it is a symbolic link; \
                 a state file and its lock file must be regular files",
                path.display()
            )
        );
        assert!(!dir.join("mark.lock").exists());
        fs::remove_file(&path).unwrap();

        // At the lock path, pointing at a file or at nothing.
        let dangling = dir.join("made-by-following");
        for to in [&target, &dangling] {
            symlink(to, dir.join("mark.lock")).unwrap();
            let err = refusal(&path);
            assert!(
                err.to_string().contains("mark.lock: it is a symbolic link"),
                "{err}"
            );
            fs::remove_file(dir.join("mark.lock")).unwrap();
        }
        assert!(!dangling.exists());

        // At the fixed temporary name earlier builds used, and at names like
        // the ones this build picks: never written through.
        symlink(&target, dir.join("mark.tmp")).unwrap();
        symlink(
            &target,
            dir.join(format!("mark.{}.0.0.tmp", std::process::id())),
        )
        .unwrap();
        let store = opened(&path);
        for _ in 0..20 {
            store.save(MARK).unwrap();
        }
        assert_eq!(store.load().unwrap(), Some(MARK));
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_state_or_lock_path_is_refused_without_blocking() {
        let dir = temp_dir("fifo");
        let path = dir.join("mark");
        mkfifo(&path);
        let at_state = path.clone();
        let err = within_seconds(5, move || refusal(&at_state));
        assert!(
            err.to_string().contains("it is a FIFO (named pipe)"),
            "{err}"
        );
        // Loading without open must not block on it either.
        let at_state = path.clone();
        let err = within_seconds(5, move || FileMarkStore::new(at_state).load().unwrap_err());
        assert!(
            err.to_string().contains("it is a FIFO (named pipe)"),
            "{err}"
        );
        fs::remove_file(&path).unwrap();

        mkfifo(&dir.join("mark.lock"));
        let err = within_seconds(5, move || refusal(&path));
        assert!(err.to_string().contains("mark.lock: it is a FIFO"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_a_clear_error() {
        let dir = temp_dir("missing");
        let err = refusal(&dir.join("no/such/dir/mark"));
        assert!(
            err.to_string().contains("cannot create the lock file"),
            "{err}"
        );
        assert!(err.to_string().contains("no/such/dir/mark.lock"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

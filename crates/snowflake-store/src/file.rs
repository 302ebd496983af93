//! [`FileMarkStore`]: the mark in a one-line file, one process at a time.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use snowflake::{Error, Layout, MarkStore};

use crate::format::{self, Stored};
use crate::guard;
use crate::refusal;

/// A [`MarkStore`] in a small text file, for one process at a time.
///
/// [`open`](MarkStore::open), which the generator's builder calls, takes an
/// exclusive lock on a lock file beside the state file (`mark.lock` beside
/// `mark`) and holds it until the store is dropped with its generator; a
/// second store on the same file, in this process or another, is refused
/// with [`ErrorKind::StoreInUse`](snowflake::ErrorKind::StoreInUse) and the
/// holder's process ID, which the lock file records. The lock file stays
/// behind: removing it could let two processes lock two different files.
///
/// # Two processes never both issue from one state file
///
/// The lock alone cannot promise that: an operator who deletes the lock file
/// of a running process lets a second process create and lock a new one. So
/// the holder also checks, on every write, that it still holds the file at
/// the lock path (the same device and inode as the file it locked) and that
/// the state file holds what it wrote last, both just before it renames its
/// new mark into place and again just after. If either fails, another
/// process may be using the file: the store writes nothing more, ever, and
/// every later [`save`](MarkStore::save) fails (kind
/// [`ErrorKind::Store`](snowflake::ErrorKind::Store)), so its generator
/// issues nothing past the last mark it wrote, and never lowers the mark
/// another process raised. A starting process reads the mark after it has
/// the lock and issues only above it; because the holder saw its own lock
/// file at the lock path after its last successful write, that write came
/// before the lock file was removed, hence before the newcomer read the
/// mark. A newcomer whose file changes while it waits for the mark to pass
/// refuses to start ([`MarkStore::confirm`], kind `StoreInUse`).
///
/// # The file
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
/// use snowflake::{ErrorKind, Layout, MarkStore};
/// use snowflake_store::FileMarkStore;
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
///
/// // The lock file removed under the holder: it stops writing.
/// std::fs::remove_file(store.lock_path()).unwrap();
/// let err = store.save(1_700_000_001_999).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Store);
/// assert!(err.to_string().contains("mark.lock was removed"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Debug)]
pub struct FileMarkStore {
    path: PathBuf,
    opened: Mutex<Option<Opened>>,
}

/// What `open` established: the lock, held for the store's life, the layout
/// every load is checked against and every save names, and what the store
/// knows the file to hold.
#[derive(Debug)]
struct Opened {
    _lock: File,
    /// The locked file's device and inode, for finding it still at the lock path.
    lock_id: Option<(u64, u64)>,
    layout: Layout,
    /// The state file's text as this store last read or wrote it; `None`
    /// when there was no file.
    expected: Option<String>,
    /// Why the store stopped writing, once it has: it never starts again.
    lost: Option<String>,
}

impl FileMarkStore {
    /// A store at `path`; nothing is opened or created until
    /// [`open`](MarkStore::open), and the state file not until the first save.
    ///
    /// ```
    /// let store = snowflake_store::FileMarkStore::new("/var/lib/snowflake/mark");
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
    /// let store = snowflake_store::FileMarkStore::new("mark");
    /// assert_eq!(store.path(), std::path::Path::new("mark"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock file beside the state file: its name with `.lock` added.
    ///
    /// ```
    /// let store = snowflake_store::FileMarkStore::new("/var/lib/snowflake/mark");
    /// assert_eq!(store.lock_path(), std::path::Path::new("/var/lib/snowflake/mark.lock"));
    /// ```
    pub fn lock_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    fn fail(&self, what: &str, err: impl core::fmt::Display) -> Error {
        Error::store_failure(format!("{what} {}: {err}", self.path.display()))
    }

    fn opened(&self) -> Result<std::sync::MutexGuard<'_, Option<Opened>>, Error> {
        self.opened.lock().map_err(|_| {
            self.fail(
                "cannot use",
                "a panic while it was in use poisoned its lock",
            )
        })
    }

    /// The state file's whole text, or `None` when there is no file.
    fn read_text(&self) -> Result<Option<String>, Error> {
        let Some(mut file) = guard::open_existing(&self.path)? else {
            return Ok(None);
        };
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|err| self.fail("cannot read", err))?;
        Ok(Some(text))
    }

    fn read(&self, layout: Option<&Layout>) -> Result<Option<Stored>, Error> {
        self.read_text()?
            .map(|text| {
                format::decode(&text, layout).map_err(|problem| self.fail("cannot use", problem))
            })
            .transpose()
    }

    /// Whether the file at the lock path is still the one this store locked
    /// and the state file still holds what it last read or wrote: `Ok(None)`
    /// when so, `Ok(Some(what))` saying what another process did when not.
    /// An error is a failure to look, which says nothing either way.
    fn taken(&self, held: &Opened) -> Result<Option<String>, Error> {
        let lock_path = self.lock_path();
        match std::fs::symlink_metadata(&lock_path) {
            Ok(meta) if guard::file_id(&meta) == held.lock_id => {}
            Ok(_) => {
                return Ok(Some(format!(
                    "its lock file {} was replaced by another file",
                    lock_path.display()
                )));
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Some(format!(
                    "its lock file {} was removed",
                    lock_path.display()
                )));
            }
            Err(err) => {
                return Err(Error::store_failure(format!(
                    "cannot look at {}: {err}",
                    lock_path.display()
                )));
            }
        }
        let text = self.read_text()?;
        if text != held.expected {
            let what = match (&text, &held.expected) {
                (None, _) => "it was removed".to_string(),
                (Some(_), None) => "it was created by another process".to_string(),
                (Some(_), Some(_)) => {
                    "another process changed it since this one last read or wrote it".to_string()
                }
            };
            return Ok(Some(what));
        }
        Ok(None)
    }

    /// Fails, and stops the store for good, if another process took the file.
    fn check(&self, held: &mut Opened, at_start: bool) -> Result<(), Error> {
        if let Some(what) = self.taken(held)? {
            return Err(self.stop(held, what, at_start));
        }
        Ok(())
    }

    /// Stops the store for good and says why.
    fn stop(&self, held: &mut Opened, what: String, at_start: bool) -> Error {
        held.lost = Some(what.clone());
        refusal::taken(&self.path, &self.lock_path(), &what, at_start)
    }

    /// Writes the mark as the type's documentation describes: to a new file,
    /// checked, renamed into place, checked again.
    fn write(&self, held: &mut Opened, mark_ms: i64) -> Result<(), Error> {
        self.write_then(held, mark_ms, || ())
    }

    /// [`FileMarkStore::write`], calling `after_rename` once the new mark is
    /// in place: the tests take the file from the store there.
    fn write_then(
        &self,
        held: &mut Opened,
        mark_ms: i64,
        after_rename: impl FnOnce(),
    ) -> Result<(), Error> {
        if let Some(what) = &held.lost {
            return Err(self.stop(held, what.clone(), false));
        }
        let text = format::encode(&held.layout, mark_ms);
        let (tmp, mut file) = guard::create_temp(&self.path)?;
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_all());
        // Checked last before the rename, after the slow fsync, so that the
        // time in which another process can take the file unseen is short.
        let checked = written
            .map_err(|err| self.fail("cannot write", err))
            .and_then(|()| self.check(held, false));
        let renamed = checked.and_then(|()| {
            fs::rename(&tmp, &self.path).map_err(|err| self.fail("cannot write", err))
        });
        if let Err(err) = renamed {
            // Best effort: the failure being reported matters more.
            let _ = fs::remove_file(&tmp);
            return Err(err);
        }
        // The file holds it now, whatever fails below.
        held.expected = Some(text);
        after_rename();
        // The rename is durable only once the directory is.
        guard::sync_dir(&self.path)
            .map_err(|err| self.fail("cannot sync the directory of", err))?;
        // Still ours after the rename: the lock file was at its path after the
        // new mark was, so a process that locks a new one reads this mark.
        self.check(held, false)
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
                return Err(refusal::locked(
                    &self.path,
                    &lock_path,
                    text.trim().parse().ok(),
                ));
            }
            Err(std::fs::TryLockError::Error(err)) => {
                return Err(Error::store_failure(format!(
                    "cannot lock {}: {err}",
                    lock_path.display()
                )));
            }
        }
        let record = file
            .set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        record.map_err(|err| {
            Error::store_failure(format!("cannot write to {}: {err}", lock_path.display()))
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
        let lock_id = lock
            .metadata()
            .map_err(|err| self.fail("cannot look at the lock file of", err))
            .map(|meta| guard::file_id(&meta))?;
        // Read after the lock is held: every mark a process that held it
        // before could have issued under is in this text.
        let text = self.read_text()?;
        let stored = text
            .as_deref()
            .map(|text| format::decode(text, Some(layout)))
            .transpose()
            .map_err(|problem| self.fail("cannot use", problem))?;
        let mut held = Opened {
            _lock: lock,
            lock_id,
            layout: layout.clone(),
            expected: text,
            lost: None,
        };
        if let Some(Stored {
            mark_ms,
            plain: true,
        }) = stored
        {
            self.write(&mut held, mark_ms)?;
        }
        *opened = Some(held);
        Ok(())
    }

    /// Fails if another process wrote the state file or took the lock file
    /// since [`open`](MarkStore::open) read it: it is using the same file.
    fn confirm(&self) -> Result<(), Error> {
        let mut opened = self.opened()?;
        match opened.as_mut() {
            Some(held) if held.lost.is_none() => self.check(held, true),
            Some(held) => {
                let what = held.lost.clone().unwrap_or_default();
                Err(self.stop(held, what, true))
            }
            None => Err(self.fail(
                "cannot confirm",
                "the store is not open; open it for a layout first (a generator's builder does)",
            )),
        }
    }

    /// Before [`open`](MarkStore::open), checks only the file's own form and
    /// checksum; after it, also that the file belongs to the layout and its
    /// mark lies within the layout's time.
    fn load(&self) -> Result<Option<i64>, Error> {
        let layout = self.opened()?.as_ref().map(|held| held.layout.clone());
        Ok(self.read(layout.as_ref())?.map(|stored| stored.mark_ms))
    }

    /// Needs [`open`](MarkStore::open) first: the file names its layout, and
    /// only the lock's holder may write it. Fails for good once another
    /// process took the file (see the type's documentation).
    fn save(&self, mark_ms: i64) -> Result<(), Error> {
        let mut opened = self.opened()?;
        let Some(held) = opened.as_mut() else {
            return Err(self.fail(
                "cannot write",
                "the store is not open; open it for a layout first (a generator's builder does)",
            ));
        };
        self.write(held, mark_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use crate::testing::{KEPT, kept_file, mkfifo, planted_link, within_seconds};
    use crate::testing::{assert_says, state_file, temp_dir};
    use snowflake::ErrorKind;

    const MARK: i64 = 1_700_000_000_999;

    fn opened(path: &Path) -> FileMarkStore {
        let store = FileMarkStore::new(path);
        store.open(&Layout::twitter()).unwrap();
        store
    }

    /// A store opened on `path` for twitter that has written [`MARK`].
    fn holding(path: &Path) -> FileMarkStore {
        let store = opened(path);
        store.save(MARK).unwrap();
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
        let (dir, path) = state_file("roundtrip");
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
        assert_eq!(names(&dir), ["mark", "mark.lock"]);
        assert_eq!(
            fs::read_to_string(store.lock_path()).unwrap(),
            format!("{}\n", std::process::id())
        );
        drop(store);
        assert_eq!(opened(&path).load().unwrap(), Some(MARK));
    }

    #[test]
    fn a_second_store_on_the_same_file_is_refused_until_the_first_is_dropped() {
        let (_dir, path) = state_file("twice");
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
    }

    #[test]
    fn saving_needs_open_and_one_store_serves_one_layout() {
        let (_dir, path) = state_file("unopened");
        let store = FileMarkStore::new(&path);
        let err = store.save(MARK).unwrap_err();
        assert_says(&err, "the store is not open");
        assert!(!path.exists());
        store.open(&Layout::twitter()).unwrap();
        store.open(&Layout::twitter()).unwrap();
        let err = store.open(&Layout::discord()).unwrap_err();
        assert_says(&err, "already open for layout time:41");
    }

    #[test]
    fn a_torn_or_corrupt_file_is_refused_naming_it() {
        let (_dir, path) = state_file("torn");
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
    }

    #[test]
    fn a_file_of_another_layout_or_out_of_its_time_is_refused() {
        let (_dir, path) = state_file("foreign");
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
            assert_says(&err, fault);
            assert_says(&err, &path.display().to_string());
        }
        // Loading without open checks only the file itself.
        fs::write(&path, format::encode(&discord, MARK)).unwrap();
        assert_eq!(FileMarkStore::new(&path).load().unwrap(), Some(MARK));
    }

    #[test]
    fn a_bare_number_from_an_earlier_build_is_read_once_and_rewritten() {
        let (_dir, path) = state_file("plain");
        fs::write(&path, format!("{MARK}\n")).unwrap();
        let store = opened(&path);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            format::encode(&Layout::twitter(), MARK)
        );
        assert_eq!(store.load().unwrap(), Some(MARK));
    }

    #[test]
    fn a_directory_at_the_state_path_is_refused() {
        let (dir, path) = state_file("dir");
        fs::create_dir(&path).unwrap();
        let err = refusal(&path);
        assert_says(&err, "it is a directory");
        assert!(!dir.join("mark.lock").exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_planted_beside_the_state_file_are_never_followed() {
        let (dir, path) = state_file("links");
        let target = kept_file(&dir);

        // At the state path: refused, no lock file made.
        planted_link(&dir, "mark", &target);
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
            planted_link(&dir, "mark.lock", to);
            let err = refusal(&path);
            assert_says(&err, "mark.lock: it is a symbolic link");
            fs::remove_file(dir.join("mark.lock")).unwrap();
        }
        assert!(!dangling.exists());

        // At the fixed temporary name earlier builds used, and at names like
        // the ones this build picks: never written through.
        planted_link(&dir, "mark.tmp", &target);
        let picked = format!("mark.{}.0.0.tmp", std::process::id());
        planted_link(&dir, &picked, &target);
        let store = opened(&path);
        for _ in 0..20 {
            store.save(MARK).unwrap();
        }
        assert_eq!(store.load().unwrap(), Some(MARK));
        assert_eq!(fs::read_to_string(&target).unwrap(), KEPT);
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_state_or_lock_path_is_refused_without_blocking() {
        let (dir, path) = state_file("fifo");
        mkfifo(&path);
        let at_state = path.clone();
        let err = within_seconds(5, move || refusal(&at_state));
        assert_says(&err, "it is a FIFO (named pipe)");
        // Loading without open must not block on it either.
        let at_state = path.clone();
        let err = within_seconds(5, move || FileMarkStore::new(at_state).load().unwrap_err());
        assert_says(&err, "it is a FIFO (named pipe)");
        fs::remove_file(&path).unwrap();

        mkfifo(&dir.join("mark.lock"));
        let err = within_seconds(5, move || refusal(&path));
        assert_says(&err, "mark.lock: it is a FIFO");
    }

    /// The names in a directory, sorted: no temporary file may be left.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_removed_lock_file_stops_the_holder_for_good() {
        let (dir, path) = state_file("lock-removed");
        let first = holding(&path);
        fs::remove_file(first.lock_path()).unwrap();
        let err = first.save(MARK + 1000).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        assert_eq!(
            err.to_string(),
            format!(
                "high-water mark store: {} may be in use by another process: its lock file {} \
                 was removed; to keep IDs unique this generator writes no more marks there and \
                 issues no ID past the last one written. Restart it once one process uses the \
                 file, and never remove {} while one runs",
                path.display(),
                first.lock_path().display(),
                first.lock_path().display()
            )
        );
        // Refused before the rename: the file holds the last mark written.
        assert_eq!(mark_in(&path), MARK);
        // A second process may now lock a new lock file and write...
        let second = opened(&path);
        second.save(MARK + 5000).unwrap();
        // ...and the first never writes again: not a higher mark, and not a
        // lower one, as a clean shutdown would, under the second's.
        for mark in [MARK + 9000, MARK - 1] {
            let err = first.save(mark).unwrap_err();
            assert_says(&err, "was removed");
        }
        assert_eq!(mark_in(&path), MARK + 5000);
        assert_eq!(names(&dir), ["mark", "mark.lock"]);
        drop(second);
    }

    /// The mark in the file at `path`, read by a store that is not opened.
    fn mark_in(path: &Path) -> i64 {
        FileMarkStore::new(path).load().unwrap().unwrap()
    }

    #[test]
    fn a_replaced_lock_file_stops_the_holder() {
        let (_dir, path) = state_file("lock-replaced");
        let first = holding(&path);
        // Another regular file at the lock path: the holder's lock is on a
        // file nobody can find any more.
        fs::remove_file(first.lock_path()).unwrap();
        fs::write(first.lock_path(), "0\n").unwrap();
        let err = first.save(MARK + 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        assert_says(
            &err,
            &format!(
                "its lock file {} was replaced by another file",
                first.lock_path().display()
            ),
        );
        assert_eq!(mark_in(&path), MARK);
    }

    #[test]
    fn a_state_file_another_process_wrote_stops_the_holder() {
        let (_dir, path) = state_file("changed");
        let twitter = Layout::twitter();
        for (change, what) in [
            (
                Some(format::encode(&twitter, MARK + 7)),
                "another process changed it",
            ),
            (None, "it was removed"),
        ] {
            let store = holding(&path);
            match &change {
                Some(text) => fs::write(&path, text).unwrap(),
                None => fs::remove_file(&path).unwrap(),
            }
            let err = store.save(MARK + 1000).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Store);
            assert_says(&err, what);
            // The other writer's file is left as it was.
            assert_eq!(fs::read_to_string(&path).ok(), change);
            // Stopped for good: not even the file as this store left it
            // brings it back, since the other writer may still be issuing.
            fs::write(&path, format::encode(&twitter, MARK)).unwrap();
            let err = store.save(MARK + 2000).unwrap_err();
            assert_says(&err, what);
            assert_eq!(mark_in(&path), MARK);
            fs::remove_file(&path).unwrap();
        }
        // A file that appears where there was none is another writer too.
        let store = opened(&path);
        fs::write(&path, format::encode(&twitter, MARK)).unwrap();
        let err = store.save(MARK + 1).unwrap_err();
        assert_says(&err, "it was created by another process");
    }

    /// The lock file taken between the rename and the check after it: the
    /// mark is in place, but the write fails, so nothing is issued under it.
    #[test]
    fn a_lock_file_taken_during_a_write_fails_that_write() {
        let (_dir, path) = state_file("during");
        let store = holding(&path);
        let lock = store.lock_path();
        let mut held = store.opened().unwrap();
        let held = held.as_mut().unwrap();
        let err = store
            .write_then(held, MARK + 1000, || fs::remove_file(&lock).unwrap())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        assert_says(&err, "was removed");
        assert_eq!(mark_in(&path), MARK + 1000);
        // And for good.
        let err = store.write(held, MARK + 2000).unwrap_err();
        assert_says(&err, "was removed");
        assert_eq!(mark_in(&path), MARK + 1000);
    }

    #[test]
    fn confirm_refuses_a_file_another_process_wrote_since_open() {
        let (dir, path) = state_file("confirm");
        fs::write(&path, format::encode(&Layout::twitter(), MARK)).unwrap();
        let store = opened(&path);
        store.confirm().unwrap();
        fs::write(&path, format::encode(&Layout::twitter(), MARK + 500)).unwrap();
        let err = store.confirm().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::StoreInUse);
        assert_eq!(
            err.to_string(),
            format!(
                "high-water mark store: {} is in use by another process: another process \
                 changed it since this one last read or wrote it while this one waited for its \
                 mark to pass; refusing to start (one state file serves one generator at a time, \
                 and {} must never be removed while one runs)",
                path.display(),
                store.lock_path().display()
            )
        );
        // Refused for good, at start and after.
        assert_eq!(store.confirm().unwrap_err().kind(), ErrorKind::StoreInUse);
        assert_eq!(store.save(MARK + 900).unwrap_err().kind(), ErrorKind::Store);
        let unopened = FileMarkStore::new(dir.join("other"));
        assert!(
            unopened
                .confirm()
                .unwrap_err()
                .to_string()
                .contains("not open")
        );
    }

    #[test]
    fn a_missing_directory_is_a_clear_error() {
        let dir = temp_dir("missing");
        let err = refusal(&dir.join("no/such/dir/mark"));
        assert_says(&err, "cannot create the lock file");
        assert_says(&err, "no/such/dir/mark.lock");
    }
}

//! Opening the state file and the files beside it without following a link
//! someone planted there and without blocking on a pipe.
//!
//! Every path is first looked at without following links (`lstat`): anything
//! but a regular file is refused before it is opened. The file is then opened
//! with `O_NOFOLLOW | O_NONBLOCK` where this module knows those flags, and
//! checked again through the open handle (`fstat`): same device and inode as
//! the file looked at, so a link or pipe swapped in between is caught before
//! a byte is read or written. New files are made with `O_EXCL`, which never
//! follows a link, and mode 0600.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use snowflake::{Error, SystemClock};

/// `O_NOFOLLOW | O_NONBLOCK`. std names neither and this crate takes no libc,
/// so the values are spelled out for the systems whose headers were checked;
/// elsewhere this is 0, and the `lstat`/`fstat` comparison alone keeps links
/// and pipes out (a pipe swapped in at the very instant between the two could
/// then block the open; it could never be written to).
#[cfg(unix)]
pub(crate) const OPEN_FLAGS: i32 = open_flags();

#[cfg(unix)]
const fn open_flags() -> i32 {
    let linux = cfg!(any(target_os = "linux", target_os = "android"));
    let bsd = cfg!(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ));
    if linux
        && cfg!(any(
            target_arch = "x86",
            target_arch = "x86_64",
            target_arch = "riscv64",
            target_arch = "loongarch64",
            target_arch = "s390x"
        ))
    {
        // asm-generic/fcntl.h
        0o400_000 | 0o4_000
    } else if linux && cfg!(any(target_arch = "arm", target_arch = "aarch64")) {
        // arm's own fcntl.h moves O_NOFOLLOW; O_NONBLOCK is the generic one.
        0o100_000 | 0o4_000
    } else if bsd {
        0x0100 | 0x0004
    } else {
        0
    }
}

/// Which file a path or a handle is: its device and inode. `None` where std
/// does not say (off Unix); callers then rely on what the file holds.
pub(crate) fn file_id(meta: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// What is at a path, when it is not a regular file, in words.
fn unusual(meta: &Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_symlink() {
        return Some("a symbolic link");
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Some("a device");
        }
    }
    Some("not a regular file")
}

fn refused(path: &Path, what: &str) -> Error {
    Error::store_failure(format!(
        "refusing to use {}: it is {what}; a state file and its lock file must be regular files",
        path.display()
    ))
}

fn failed(what: &str, path: &Path, err: io::Error) -> Error {
    Error::store_failure(format!("cannot {what} {}: {err}", path.display()))
}

/// What is at `path`, not following links: `None` when nothing is, an error
/// when it is anything but a regular file.
pub(crate) fn regular_or_absent(path: &Path) -> Result<Option<Metadata>, Error> {
    match fs::symlink_metadata(path) {
        Ok(meta) => match unusual(&meta) {
            None => Ok(Some(meta)),
            Some(what) => Err(refused(path, what)),
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(failed("look at", path, err)),
    }
}

fn options(write: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).write(write);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(OPEN_FLAGS).mode(0o600);
    }
    options
}

/// Opens the regular file that `seen` describes, and makes sure through the
/// handle that it is that file.
fn open_seen(path: &Path, seen: &Metadata, write: bool) -> Result<File, Error> {
    let file = options(write)
        .open(path)
        .map_err(|err| failed("open", path, err))?;
    let now = file
        .metadata()
        .map_err(|err| failed("look at", path, err))?;
    if let Some(what) = unusual(&now) {
        return Err(refused(path, what));
    }
    if file_id(&now) != file_id(seen) {
        return Err(Error::store_failure(format!(
            "refusing to use {}: it was replaced while it was being opened",
            path.display()
        )));
    }
    Ok(file)
}

/// The file at `path` for reading, or `None` when there is none.
pub(crate) fn open_existing(path: &Path) -> Result<Option<File>, Error> {
    match regular_or_absent(path)? {
        None => Ok(None),
        Some(seen) => open_seen(path, &seen, false).map(Some),
    }
}

/// A file that did not exist, for writing. `O_EXCL` fails on any link,
/// even one that points nowhere, so nothing is created through one.
fn create_new(path: &Path) -> io::Result<File> {
    options(true).create_new(true).open(path)
}

/// The lock file, opened for reading and writing, created if need be.
pub(crate) fn open_lock(path: &Path) -> Result<File, Error> {
    // A few rounds: another process may create it between our look and our
    // exclusive create; a third round would mean something is racing us.
    for _ in 0..3 {
        match regular_or_absent(path)? {
            Some(seen) => return open_seen(path, &seen, true),
            None => match create_new(path) {
                Ok(file) => return Ok(file),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(failed("create the lock file", path, err)),
            },
        }
    }
    Err(Error::store_failure(format!(
        "cannot open the lock file {}: it keeps appearing and disappearing",
        path.display()
    )))
}

/// A new file beside `path`, for writing, under a name no other writer uses:
/// the process ID, a counter within the process and the clock's nanoseconds.
pub(crate) fn create_temp(path: &Path) -> Result<(PathBuf, File), Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    create_first_free(|| {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemClock.now_ns().rem_euclid(1_000_000_000);
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{}.{n}.{nanos}.tmp", std::process::id()));
        PathBuf::from(name)
    })
}

/// Creates a file under the first name from `names` that is not taken,
/// trying four at most: a name is taken only if someone planted a file (or
/// a link) there, which is never touched; four in a row means something is
/// racing us on purpose.
fn create_first_free(mut names: impl FnMut() -> PathBuf) -> Result<(PathBuf, File), Error> {
    let mut attempts = 0;
    loop {
        let tmp = names();
        match create_new(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempts < 3 => {
                attempts += 1;
            }
            Err(err) => return Err(failed("create a temporary file", &tmp, err)),
        }
    }
}

/// Makes a rename in `path`'s directory durable. A bare file name lives in
/// the working directory, whose name is `.`.
pub(crate) fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use crate::testing::{KEPT, kept_file, mkfifo, planted_link, state_file, within_seconds};
    use crate::testing::{assert_says, temp_dir};
    use std::io::{Read, Write};

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn the_flags_are_the_systems_own() {
        // If the constants were wrong, the kernel would follow the link and
        // block on the pipe; it does neither, so they are right here.
        let dir = temp_dir("flags");
        let link = planted_link(&dir, "link", &kept_file(&dir));
        let mut options = OpenOptions::new();
        std::os::unix::fs::OpenOptionsExt::custom_flags(options.read(true), OPEN_FLAGS);
        let err = options.open(&link).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(40), "not ELOOP: {err}");
        let fifo = dir.join("fifo");
        mkfifo(&fifo);
        within_seconds(5, move || options.open(&fifo).map(drop)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_directories_and_pipes_are_named_and_never_opened() {
        let dir = temp_dir("kinds");
        let target = kept_file(&dir);
        let link = planted_link(&dir, "link", &target);
        let dangling = planted_link(&dir, "dangling", &dir.join("nowhere"));
        let fifo = dir.join("fifo");
        mkfifo(&fifo);
        let sub = dir.join("sub");
        fs::create_dir(&sub).unwrap();
        for (path, what) in [
            (link.clone(), "a symbolic link"),
            (dangling.clone(), "a symbolic link"),
            (fifo.clone(), "a FIFO (named pipe)"),
            (sub.clone(), "a directory"),
        ] {
            let for_lock = path.clone();
            let err = within_seconds(5, move || open_lock(&for_lock).unwrap_err());
            let message = err.to_string();
            assert!(
                message.contains(&format!("{}: it is {what}", path.display())),
                "{message}"
            );
            let for_read = path.clone();
            let err = within_seconds(5, move || open_existing(&for_read).unwrap_err());
            assert_says(&err, what);
        }
        assert_eq!(fs::read_to_string(&target).unwrap(), KEPT);
        assert!(
            !dir.join("nowhere").exists(),
            "the dangling link was followed"
        );
    }

    /// Asserts that `err` is the system's refusal to `what` at `path`: its
    /// message names both, and the system's reason follows.
    fn assert_failed(err: &Error, what: &str, path: &Path) {
        let message = err.to_string();
        let named = format!("high-water mark store: cannot {what} {}:", path.display());
        assert!(message.starts_with(&named), "{message}");
    }

    /// What another process wrote at a name it took first.
    const SOMEONE_ELSES: &str = "someone else's";

    /// Six temporary names in `dir`, the first `taken` of them already
    /// taken by another process.
    fn names_taken(dir: &Path, taken: usize) -> Vec<PathBuf> {
        let names: Vec<PathBuf> = (0..6).map(|i| dir.join(format!("t{i}"))).collect();
        for planted in &names[..taken] {
            fs::write(planted, SOMEONE_ELSES).unwrap();
        }
        names
    }

    #[test]
    fn a_taken_temporary_name_is_passed_over_and_never_touched() {
        let dir = temp_dir("taken");
        let names = names_taken(&dir, 3);
        let mut next = names.clone().into_iter();
        let (tmp, _) = create_first_free(|| next.next().unwrap()).unwrap();
        assert_eq!(tmp, names[3], "three taken names, then the fourth");
        for planted in &names[..3] {
            assert_eq!(fs::read_to_string(planted).unwrap(), SOMEONE_ELSES);
        }
    }

    #[test]
    fn four_taken_names_in_a_row_are_an_error_not_a_fifth_try() {
        let dir = temp_dir("racing");
        let names = names_taken(&dir, 4);
        let mut next = names.clone().into_iter();
        let err = create_first_free(|| next.next().unwrap()).unwrap_err();
        assert_failed(&err, "create a temporary file", &names[3]);
        assert!(!names[4].exists(), "a fifth name was tried");
    }

    #[test]
    fn a_temporary_file_that_cannot_be_made_is_an_error_at_once() {
        let dir = temp_dir("nodir");
        let missing = dir.join("no-such-directory").join("mark");
        // Only a taken name is worth another try; a missing directory is
        // the same for every name.
        let mut tries = 0;
        let err = create_first_free(|| {
            tries += 1;
            missing.with_extension(format!("{tries}.tmp"))
        })
        .unwrap_err();
        assert_eq!(tries, 1, "tried again after {err}");
        assert_failed(
            &err,
            "create a temporary file",
            &missing.with_extension("1.tmp"),
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_named_as_one() {
        let path = Path::new("/dev/null");
        let err = open_existing(path).unwrap_err();
        assert_eq!(
            err.to_string(),
            "high-water mark store: refusing to use /dev/null: it is a device; a state file and its lock file must be regular files"
        );
    }

    #[test]
    fn a_path_that_cannot_be_looked_at_is_not_taken_for_absent() {
        // A path below a regular file: the look fails with "not a
        // directory", which must not be read as "nothing there yet".
        let dir = temp_dir("below-file");
        let file = dir.join("file");
        fs::write(&file, "x").unwrap();
        let below = file.join("mark");
        let err = regular_or_absent(&below).unwrap_err();
        assert_failed(&err, "look at", &below);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_private_and_never_reuse_a_name() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, path) = state_file("new");
        let (a, mut file) = create_temp(&path).unwrap();
        file.write_all(b"a").unwrap();
        let (b, _) = create_temp(&path).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(&*dir));
        assert_eq!(
            fs::metadata(&a).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let lock = open_lock(&dir.join("mark.lock")).unwrap();
        assert_eq!(lock.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        // An existing lock file is opened, not replaced.
        drop(lock);
        fs::write(dir.join("mark.lock"), "41\n").unwrap();
        let mut text = String::new();
        open_lock(&dir.join("mark.lock"))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "41\n");
        assert!(open_existing(&dir.join("absent")).unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_never_made_through_a_link() {
        let dir = temp_dir("excl");
        let target = kept_file(&dir);
        for (link, to) in [
            ("to-file", target.clone()),
            ("to-nothing", dir.join("nowhere")),
        ] {
            let err = create_new(&planted_link(&dir, link, &to)).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        }
        assert_eq!(fs::read_to_string(&target).unwrap(), KEPT);
        assert!(!dir.join("nowhere").exists());
    }

    #[test]
    fn a_bare_file_name_syncs_the_working_directory() {
        // `Path::new("mark").parent()` is `Some("")`, which cannot be opened.
        assert!(File::open("").is_err());
        sync_dir(Path::new("mark")).unwrap();
        assert!(sync_dir(Path::new("/no/such/dir/mark")).is_err());
    }
}

//! Keys on disk: a file holding 64 hexadecimal characters, created private
//! and never overwritten, and a warning when one is open to others.
//!
//! A key is given as a file, never as an argument or a variable's value:
//! arguments are visible to every user in `ps` and land in shell history,
//! and the environment leaks into crash reports and child processes. A path
//! is harmless in both places. Anything a file can be works, so
//! `--key-file <(vault read -field=key secret/mask)` keeps a key off disk.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::error::{Error, KeyProblem};
use crate::key::MaskKey;
use crate::shown::Shown;

/// More than any key file needs (64 characters and some whitespace): a
/// path to a large file by mistake is refused without reading it all.
const MAX_FILE_LEN: usize = 4096;

/// A key read from, or written to, a file.
///
/// ```
/// use snowflake_mask::KeyFile;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("mask.key");
/// let written = KeyFile::create_new(&path)?;
/// assert!(written.warning().is_none());
/// let read = KeyFile::read(&path)?;
/// assert_eq!(read.path(), path);
/// // Never overwritten:
/// assert!(KeyFile::create_new(&path).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KeyFile {
    key: MaskKey,
    path: PathBuf,
    /// The file's permission bits, where the platform has them.
    mode: Option<u32>,
}

/// The path as messages name it, so that not even `Debug` shows a path
/// that may hold the key; the key shows itself redacted.
impl std::fmt::Debug for KeyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyFile")
            .field("key", &self.key)
            .field("path", &format_args!("{}", Shown::of(&self.path)))
            .field("mode", &self.mode)
            .finish()
    }
}

impl KeyFile {
    /// Reads a key file: 64 hexadecimal characters, whitespace around them
    /// allowed. A file that is missing, unreadable, larger than a key file
    /// or not a key is an error that names the path and says what is wrong,
    /// without showing what the file holds, and without the path when it
    /// holds 32 or more hexadecimal digits (it may be the key, pasted where
    /// its file's name goes).
    ///
    /// ```
    /// use snowflake_mask::KeyFile;
    ///
    /// let err = KeyFile::read("/nonexistent/mask.key").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "cannot read key file /nonexistent/mask.key: there is no such file"
    /// );
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<KeyFile, Error> {
        let path = path.as_ref();
        let fail = |err: io::Error| Error::key_file(path, "read", &err);
        let file = File::open(path).map_err(fail)?;
        // The mode of the file that was opened, not of whatever the path
        // names a moment later.
        let mode = permission_bits(&file.metadata().map_err(fail)?);
        let mut text = Zeroizing::new(Vec::with_capacity(MAX_FILE_LEN + 1));
        file.take(MAX_FILE_LEN as u64 + 1)
            .read_to_end(&mut text)
            .map_err(fail)?;
        if text.len() > MAX_FILE_LEN {
            return Err(MaskKey::problem(KeyProblem::TooLarge {
                limit: MAX_FILE_LEN,
            })
            .in_file(path));
        }
        // Bytes that are not UTF-8 are not hexadecimal either; the lossy
        // text reports them at their position.
        let text = Zeroizing::new(String::from_utf8_lossy(&text).into_owned());
        let key = MaskKey::from_hex(&text).map_err(|err| err.in_file(path))?;
        Ok(KeyFile {
            key,
            path: path.to_path_buf(),
            mode,
        })
    }

    /// Writes a new random key to `path`, readable and writable by its owner
    /// only (mode 0600 on Unix), and refuses if anything is there already:
    /// a key file is never overwritten, since the IDs masked with the old key
    /// could no longer be unmasked.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let key = snowflake_mask::KeyFile::create_new(dir.path().join("k"))?;
    /// # let _ = key;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_new(path: impl AsRef<Path>) -> Result<KeyFile, Error> {
        let path = path.as_ref();
        let key = MaskKey::generate()?;
        let fail = |err: io::Error| Error::key_file(path, "create", &err);
        let mut options = OpenOptions::new();
        // O_EXCL: fails if the path exists, even as a dangling symbolic link,
        // so no race with another writer and no write through a planted link.
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path).map_err(fail)?;
        let written = file
            .write_all(key.to_file_text().as_bytes())
            .and_then(|()| file.sync_all());
        if let Err(err) = written {
            // A half-written key file would be refused later anyway; removing
            // it lets the command simply be run again.
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(fail(err));
        }
        let mode = file.metadata().ok().and_then(|m| permission_bits(&m));
        Ok(KeyFile {
            key,
            path: path.to_path_buf(),
            mode,
        })
    }

    /// The key.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("k");
    /// # snowflake_mask::KeyFile::create_new(&path)?;
    /// let file = snowflake_mask::KeyFile::read(&path)?;
    /// let masker = snowflake_mask::Masker::new(&snowflake::Layout::twitter(), file.key())?;
    /// # let _ = masker;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn key(&self) -> &MaskKey {
        &self.key
    }

    /// The path the key was read from or written to.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("k");
    /// let file = snowflake_mask::KeyFile::create_new(&path)?;
    /// assert_eq!(file.path(), path);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A warning for a key file that users other than its owner may read or
    /// write (any permission bit for group or others, as `ssh` judges
    /// private keys), with the command that fixes it; `None` for a private
    /// one, and always on platforms without Unix permissions. The front end
    /// decides where it goes (stderr, the log).
    ///
    /// ```
    /// use std::os::unix::fs::PermissionsExt;
    ///
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("k");
    /// snowflake_mask::KeyFile::create_new(&path)?;
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    /// let warning = snowflake_mask::KeyFile::read(&path)?.warning().unwrap();
    /// assert!(warning.contains("(mode 644)"));
    /// assert!(warning.ends_with(&format!("chmod 600 {}", path.display())));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn warning(&self) -> Option<String> {
        let mode = self.mode.filter(|mode| mode & 0o077 != 0)?;
        let name = Shown::of(&self.path);
        let fix = match &name {
            Shown::Path(path) => format!("chmod 600 {path}"),
            Shown::Hidden => "chmod 600 it".to_string(),
        };
        Some(format!(
            "key file {name} can be read or changed by users other than its owner \
             (mode {mode:03o}); anyone who reads it can unmask every ID masked with it; \
             make it private: {fix}"
        ))
    }

    /// The path as messages should name it: whole, or a note in its place
    /// when it holds 32 or more hexadecimal digits and so may hold the key
    /// (errors and [`KeyFile::warning`] name it so too).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("mask.key");
    /// let file = snowflake_mask::KeyFile::create_new(&path)?;
    /// assert_eq!(file.name(), path.display().to_string());
    /// let odd = dir.path().join("5a".repeat(16));
    /// let file = snowflake_mask::KeyFile::create_new(&odd)?;
    /// assert!(file.name().starts_with("(name not shown"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> String {
        Shown::of(&self.path).to_string()
    }

    /// The key, without the file's name.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("k");
    /// # snowflake_mask::KeyFile::create_new(&path)?;
    /// let key: snowflake_mask::MaskKey = snowflake_mask::KeyFile::read(&path)?.into_key();
    /// # let _ = key;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_key(self) -> MaskKey {
        self.key
    }
}

#[cfg(unix)]
fn permission_bits(metadata: &std::fs::Metadata) -> Option<u32> {
    Some(std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o777)
}

#[cfg(not(unix))]
fn permission_bits(_: &std::fs::Metadata) -> Option<u32> {
    None
}

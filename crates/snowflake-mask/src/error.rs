//! What can go wrong before the first ID is masked: a layout too narrow for
//! FF1, a key that is not a key, a key file that cannot be read or written.
//!
//! # Design
//!
//! Masking one ID fails only when the ID is outside its layout, which is the
//! core's own error ([`snowflake::Error`], the one `decode` gives), so
//! [`Masker::mask`](crate::Masker::mask) returns that and front ends report
//! it exactly as they report a bad ID anywhere else. Everything here happens
//! once, at start-up, and is this crate's [`Error`].
//!
//! No message, and no `Debug` output, ever holds key material: not the key,
//! not the text of a file that failed to parse as one (which may be a key
//! with a typo), not a character of it. A key file is named by its path and
//! described by its length and the position of a bad character; that is
//! enough to fix it and tells an onlooker nothing. The path itself is left
//! out when it could hold the key (see `shown.rs`): the message then says
//! what went wrong all the same.

use std::fmt;
use std::io;
use std::path::Path;

use crate::shown::Shown;

/// Why a masker or a key could not be made.
///
/// ```
/// use snowflake_mask::{ErrorKind, MaskKey};
///
/// let err = MaskKey::from_hex("c0ffee").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidInput);
/// assert_eq!(
///     err.to_string(),
///     "the key holds 6 characters; a key is 64 hexadecimal characters (256 bits)"
/// );
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Repr>);

/// The broad class of an [`Error`], for callers that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The caller gave something that cannot be used: a layout too narrow,
    /// a key that is not 64 hexadecimal characters, a key file that is not
    /// there or not readable, a new key file where one exists already.
    /// Front ends report it as a usage error.
    InvalidInput,
    /// Reading or writing a key file failed for another reason, or the
    /// system's random source did not answer.
    Io,
}

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    TooNarrow {
        layout: String,
        bits: u8,
        min_bits: u8,
    },
    KeyText {
        path: Option<Shown>,
        problem: KeyProblem,
        hex_len: usize,
        bits: usize,
    },
    KeyFile {
        path: Shown,
        kind: ErrorKind,
        doing: &'static str,
        reason: String,
    },
    Random {
        reason: String,
    },
    NoKey,
}

/// What is wrong with a key's text; never the text itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyProblem {
    Empty,
    Length(usize),
    NotHex { position: usize },
    TooLarge { limit: usize },
}

impl Error {
    fn new(repr: Repr) -> Self {
        Error(Box::new(repr))
    }

    /// The broad class of this error.
    ///
    /// ```
    /// use snowflake::Layout;
    /// use snowflake_mask::{ErrorKind, MaskKey, Masker};
    ///
    /// let narrow: Layout = "time:10,sequence:5".parse()?;
    /// let err = Masker::new(&narrow, &MaskKey::from_bytes([7; 32])).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidInput);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match &*self.0 {
            Repr::TooNarrow { .. } | Repr::KeyText { .. } | Repr::NoKey => ErrorKind::InvalidInput,
            Repr::KeyFile { kind, .. } => *kind,
            Repr::Random { .. } => ErrorKind::Io,
        }
    }

    pub(crate) fn too_narrow(layout: String, bits: u8, min_bits: u8) -> Self {
        Error::new(Repr::TooNarrow {
            layout,
            bits,
            min_bits,
        })
    }

    /// What is wrong with a key's text, said against a key's length in
    /// hexadecimal characters and in bits.
    pub(crate) fn key_text(problem: KeyProblem, hex_len: usize, bits: usize) -> Self {
        Error::new(Repr::KeyText {
            path: None,
            problem,
            hex_len,
            bits,
        })
    }

    /// The same problem, said of the file the text came from.
    pub(crate) fn in_file(self, path: &Path) -> Self {
        match *self.0 {
            Repr::KeyText {
                problem,
                hex_len,
                bits,
                ..
            } => Error::new(Repr::KeyText {
                path: Some(Shown::of(path)),
                problem,
                hex_len,
                bits,
            }),
            other => Error::new(other),
        }
    }

    /// A key file that could not be opened, read or written: the operator's
    /// mistake (not there, not allowed, already there) or the machine's. A
    /// path that could hold the key is not shown.
    pub(crate) fn key_file(path: &Path, doing: &'static str, err: &io::Error) -> Self {
        use io::ErrorKind as K;
        let kind = match err.kind() {
            K::NotFound | K::PermissionDenied | K::AlreadyExists | K::IsADirectory => {
                ErrorKind::InvalidInput
            }
            _ => ErrorKind::Io,
        };
        let reason = match err.kind() {
            K::NotFound if doing == "create" => "its directory does not exist".to_string(),
            K::NotFound => "there is no such file".to_string(),
            K::PermissionDenied => "permission denied".to_string(),
            K::AlreadyExists => "it exists already, and a key file is never overwritten; \
                 remove it first or choose another path"
                .to_string(),
            K::IsADirectory => "it is a directory".to_string(),
            _ => err.to_string(),
        };
        Error::new(Repr::KeyFile {
            path: Shown::of(path),
            kind,
            doing,
            reason,
        })
    }

    pub(crate) fn no_key() -> Self {
        Error::new(Repr::NoKey)
    }

    pub(crate) fn random(err: getrandom::Error) -> Self {
        Error::new(Repr::Random {
            reason: err.to_string(),
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Repr::TooNarrow {
                layout,
                bits,
                min_bits,
            } => write!(
                f,
                "layout {layout} is {bits} bits wide; masking needs at least {min_bits} bits, \
                 because FF1 is approved only for domains of a million values or more (NIST SP \
                 800-38G Rev. 1)"
            ),
            Repr::KeyText {
                path,
                problem,
                hex_len,
                bits,
            } => {
                match path {
                    Some(path) => write!(f, "key file {path} ")?,
                    None => f.write_str("the key ")?,
                }
                match problem {
                    KeyProblem::Empty => f.write_str("is empty")?,
                    KeyProblem::Length(n) => write!(f, "holds {n} characters")?,
                    KeyProblem::NotHex { position } => write!(
                        f,
                        "holds a character that is not hexadecimal (0-9, a-f) at position {position}"
                    )?,
                    KeyProblem::TooLarge { limit } => {
                        write!(f, "is larger than {limit} bytes")?;
                    }
                }
                write!(
                    f,
                    "; a key is {hex_len} hexadecimal characters ({bits} bits)"
                )?;
                if path.is_some() {
                    f.write_str(", with whitespace around them allowed, as `snowflake mask-key new` writes it")?;
                }
                Ok(())
            }
            Repr::KeyFile {
                path,
                doing,
                reason,
                ..
            } => {
                write!(f, "cannot {doing} key file {path}: {reason}")?;
                if path.is_hidden() {
                    f.write_str(
                        "; give the path of a file that holds the key, never the key itself \
                         (if it was the key, it may be in the shell's history: make a new one)",
                    )?;
                }
                Ok(())
            }
            Repr::NoKey => f.write_str("a key ring needs at least one key"),
            Repr::Random { reason } => {
                write!(f, "the system's random source did not give a key: {reason}")
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The message holds no key material, so Debug can show it.
        f.debug_tuple("Error")
            .field(&format_args!("{self}"))
            .finish()
    }
}

impl std::error::Error for Error {}

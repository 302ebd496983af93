//! How a key file's path is named in errors, warnings and messages: whole,
//! unless it could hold the key.
//!
//! # Design
//!
//! An operator who pastes the key where its file's name goes seldom pastes
//! it alone: `0x<key>`, `./<key>`, `secrets/<key>`, `key=<key>`, the key a
//! character short or long, with a typo or split by dashes. Each holds most
//! of the key, and a message that named it would put the key into a
//! terminal's scrollback or a container's log. A rule that looked for the
//! key's shape (64 digits in a row) would miss every one of those, so the
//! rule counts digits instead: a path holding [`HIDDEN_FROM`] hexadecimal
//! digits or more, wherever they are and whatever is between them, is not
//! shown. What a shown path can hold of a key is then at most 31 of its 64
//! digits, 124 bits, which leaves 132 unknown: beyond any search. An
//! ordinary path (`/run/secrets/mask.key`, 7 digits) is still named; a
//! path that merely happens to hold 32 digits (a directory named by a
//! UUID) loses only its name, and the message still says what went wrong.

use std::fmt;
use std::path::Path;

/// Half of a key's 64 hexadecimal digits: a path holding this many is not
/// shown. Written out rather than derived from `MaskKey::HEX_LEN`, since
/// the key's module imports the errors, which import this one; a test of
/// the key holds the two together.
pub(crate) const HIDDEN_FROM: usize = 32;

/// A key file's path as messages name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shown {
    /// The path, as `Path::display` writes it.
    Path(String),
    /// A path that could hold the key, left out.
    Hidden,
}

impl Shown {
    /// How `path` is named: hidden when it holds [`HIDDEN_FROM`]
    /// hexadecimal digits or more. The bytes are counted as the system
    /// holds them, so a path that is not UTF-8 is judged by its digits too.
    pub(crate) fn of(path: &Path) -> Shown {
        let digits = path
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .filter(|b| b.is_ascii_hexdigit())
            .count();
        if digits >= HIDDEN_FROM {
            Shown::Hidden
        } else {
            Shown::Path(path.display().to_string())
        }
    }

    pub(crate) fn is_hidden(&self) -> bool {
        matches!(self, Shown::Hidden)
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Path(path) => f.write_str(path),
            Shown::Hidden => write!(
                f,
                "(name not shown: it holds {HIDDEN_FROM} or more hexadecimal digits, and may \
                 hold the key)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_hidden_from_32_hexadecimal_digits_on() {
        let digits = |n: usize| "a".repeat(n);
        assert_eq!(
            Shown::of(Path::new(&format!("/x/{}", digits(31)))),
            Shown::Path(format!("/x/{}", digits(31)))
        );
        assert!(Shown::of(Path::new(&digits(32))).is_hidden());
        // Wherever they are, whatever is between them.
        let spread: String = digits(32).chars().flat_map(|c| [c, '/']).collect();
        assert!(Shown::of(Path::new(&spread)).is_hidden());
        assert!(!Shown::of(Path::new("/run/secrets/mask.key")).is_hidden());
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_judged_by_its_digits() {
        use std::os::unix::ffi::OsStrExt;
        let mut bytes = vec![0xff];
        bytes.extend_from_slice("0123456789abcdef".repeat(2).as_bytes());
        let path = Path::new(std::ffi::OsStr::from_bytes(&bytes));
        assert!(Shown::of(path).is_hidden());
        let short = Path::new(std::ffi::OsStr::from_bytes(&bytes[..32]));
        assert!(!Shown::of(short).is_hidden());
    }
}

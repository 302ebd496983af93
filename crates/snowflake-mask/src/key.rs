//! The secret: 256 bits, for AES-256 inside FF1.

use std::fmt;

use zeroize::{ZeroizeOnDrop, Zeroizing};

use crate::error::{Error, KeyProblem};

/// A 256-bit masking key.
///
/// It never shows itself: `Debug` prints `MaskKey([redacted])`, there is no
/// `Display`, and the bytes are wiped when it is dropped. Keys come from a
/// file ([`KeyFile`](crate::KeyFile)), from 64 hexadecimal characters, from
/// bytes, or fresh from the system's random source.
///
/// ```
/// use snowflake_mask::MaskKey;
///
/// let key = MaskKey::from_hex(&"5a".repeat(32))?;
/// assert_eq!(format!("{key:?}"), "MaskKey([redacted])");
/// # Ok::<(), snowflake_mask::Error>(())
/// ```
#[derive(Clone, ZeroizeOnDrop)]
pub struct MaskKey([u8; MaskKey::BYTES]);

impl MaskKey {
    /// The key's length in bits: AES-256.
    ///
    /// ```
    /// assert_eq!(snowflake_mask::MaskKey::BITS, 256);
    /// ```
    pub const BITS: usize = 256;

    /// The key's length in bytes.
    ///
    /// ```
    /// assert_eq!(snowflake_mask::MaskKey::BYTES, 32);
    /// ```
    pub const BYTES: usize = MaskKey::BITS / 8;

    /// The key's length written in hexadecimal, as key files hold it.
    ///
    /// ```
    /// assert_eq!(snowflake_mask::MaskKey::HEX_LEN, 64);
    /// ```
    pub const HEX_LEN: usize = MaskKey::BYTES * 2;

    /// A key from its bytes, for keys kept elsewhere (a secret manager).
    ///
    /// ```
    /// let key = snowflake_mask::MaskKey::from_bytes([0x42; 32]);
    /// # let _ = key;
    /// ```
    pub const fn from_bytes(bytes: [u8; MaskKey::BYTES]) -> MaskKey {
        MaskKey(bytes)
    }

    /// A key from 64 hexadecimal characters, either case, with whitespace
    /// around them allowed. The error says how long the text was or where a
    /// bad character is, never what it is.
    ///
    /// ```
    /// use snowflake_mask::MaskKey;
    ///
    /// assert!(MaskKey::from_hex(&format!("  {}\n", "Ab".repeat(32))).is_ok());
    /// let err = MaskKey::from_hex(&format!("{}zz", "ab".repeat(31))).unwrap_err();
    /// assert!(err.to_string().contains("not hexadecimal (0-9, a-f) at position 63"));
    /// ```
    pub fn from_hex(text: &str) -> Result<MaskKey, Error> {
        let text = text.trim_ascii();
        if text.is_empty() {
            return Err(MaskKey::problem(KeyProblem::Empty));
        }
        // Counted in characters, so that a key typed with a non-ASCII
        // look-alike reads as the length and position the user sees.
        let count = text.chars().count();
        if count != MaskKey::HEX_LEN {
            return Err(MaskKey::problem(KeyProblem::Length(count)));
        }
        if let Some(at) = text.chars().position(|c| !c.is_ascii_hexdigit()) {
            return Err(MaskKey::problem(KeyProblem::NotHex { position: at + 1 }));
        }
        // 64 ASCII hexadecimal digits from here on.
        let mut key = MaskKey([0; MaskKey::BYTES]);
        for (byte, pair) in key.0.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
            *byte = (hex_digit(pair[0]) << 4) | hex_digit(pair[1]);
        }
        Ok(key)
    }

    /// A new key from the operating system's random source.
    ///
    /// ```
    /// let key = snowflake_mask::MaskKey::generate()?;
    /// # let _ = key;
    /// # Ok::<(), snowflake_mask::Error>(())
    /// ```
    pub fn generate() -> Result<MaskKey, Error> {
        let mut key = MaskKey([0; MaskKey::BYTES]);
        getrandom::fill(&mut key.0).map_err(Error::random)?;
        Ok(key)
    }

    /// The error for key text with `problem`.
    pub(crate) fn problem(problem: KeyProblem) -> Error {
        Error::key_text(problem, MaskKey::HEX_LEN, MaskKey::BITS)
    }

    pub(crate) fn bytes(&self) -> &[u8; MaskKey::BYTES] {
        &self.0
    }

    /// The key as a key file holds it: lower-case hexadecimal and a newline,
    /// in memory that is wiped when dropped.
    pub(crate) fn to_file_text(&self) -> Zeroizing<String> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = Zeroizing::new(String::with_capacity(MaskKey::HEX_LEN + 1));
        for byte in self.0 {
            text.push(char::from(DIGITS[usize::from(byte >> 4)]));
            text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
        }
        text.push('\n');
        text
    }
}

/// The value of an ASCII hexadecimal digit, already checked to be one.
fn hex_digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

impl fmt::Debug for MaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MaskKey([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    /// A path is hidden from half a key's digits on.
    #[test]
    fn paths_are_hidden_from_half_a_key() {
        assert_eq!(crate::shown::HIDDEN_FROM * 2, MaskKey::HEX_LEN);
    }

    #[test]
    fn hex_reads_every_byte_in_order_and_writes_back_the_same() {
        let key = MaskKey::from_hex(HEX).unwrap();
        let expected: Vec<u8> = (0..32).collect();
        assert_eq!(key.bytes().as_slice(), expected);
        assert_eq!(key.to_file_text().as_str(), format!("{HEX}\n"));
        let upper = MaskKey::from_hex(&HEX.to_uppercase()).unwrap();
        assert_eq!(upper.bytes(), key.bytes());
    }

    #[test]
    fn bad_text_is_described_without_being_shown() {
        let cases = [
            ("", "the key is empty"),
            ("  \n\t", "the key is empty"),
            (&HEX[..63], "the key holds 63 characters"),
            (&format!("{HEX}0"), "the key holds 65 characters"),
            (&format!("{HEX} {HEX}"), "the key holds 129 characters"),
            (
                &format!("g{}", &HEX[1..]),
                "the key holds a character that is not hexadecimal (0-9, a-f) at position 1",
            ),
            (
                &format!("{}-f", &HEX[..62]),
                "the key holds a character that is not hexadecimal (0-9, a-f) at position 63",
            ),
            (&format!("{}é", &HEX[..62]), "the key holds 63 characters"),
            (
                &format!("{}é", &HEX[..63]),
                "the key holds a character that is not hexadecimal (0-9, a-f) at position 64",
            ),
            (
                &format!("{}+", &HEX[..63]),
                "the key holds a character that is not hexadecimal (0-9, a-f) at position 64",
            ),
        ];
        for (text, start) in cases {
            let err = MaskKey::from_hex(text).unwrap_err();
            let message = err.to_string();
            assert!(message.starts_with(start), "{text:?}: {message}");
            assert!(
                message.ends_with("a key is 64 hexadecimal characters (256 bits)"),
                "{message}"
            );
            assert!(!message.contains(&HEX[..16]), "{message}");
            assert!(!format!("{err:?}").contains(&HEX[..16]));
        }
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = MaskKey::from_hex(HEX).unwrap();
        assert_eq!(format!("{key:?}"), "MaskKey([redacted])");
        assert_eq!(format!("{key:#?}"), "MaskKey([redacted])");
    }

    #[test]
    fn generated_keys_differ() {
        let a = MaskKey::generate().unwrap();
        let b = MaskKey::generate().unwrap();
        assert_ne!(a.bytes(), b.bytes());
        assert_ne!(a.bytes(), &[0; 32]);
    }
}

use core::fmt;
use core::str::FromStr;

use crate::error::Error;

/// A 64-bit Snowflake ID.
///
/// It parses from decimal or `0x` hexadecimal and prints as decimal; the
/// other text forms (base32, base62, base58) are in `TextForm`. With the
/// `serde` feature it serialises as a decimal string, because JavaScript
/// numbers lose precision above 2^53, and deserialises from such a string or
/// from an integer.
///
/// ```
/// use snowflake::Id;
///
/// let id: Id = "4194439168".parse()?;
/// assert_eq!(id, "0xfa021000".parse()?);
/// assert_eq!(id.get(), 4194439168);
/// assert_eq!(id.to_string(), "4194439168");
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Id(u64);

impl Id {
    /// Wraps a raw 64-bit value.
    ///
    /// ```
    /// assert_eq!(snowflake::Id::new(7).get(), 7);
    /// ```
    pub const fn new(value: u64) -> Self {
        Id(value)
    }

    /// The raw 64-bit value.
    ///
    /// ```
    /// assert_eq!(snowflake::Id::new(7).get(), 7);
    /// ```
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl FromStr for Id {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Id::parse(s)
    }
}

impl TryFrom<&str> for Id {
    type Error = Error;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Id::parse(s)
    }
}

impl From<u64> for Id {
    fn from(value: u64) -> Self {
        Id(value)
    }
}

impl From<Id> for u64 {
    fn from(id: Id) -> Self {
        id.0
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::LowerHex for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl fmt::UpperHex for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::UpperHex::fmt(&self.0, f)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::Id;
    use core::fmt;
    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl Serialize for Id {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut buf = [0u8; 20];
            serializer.serialize_str(self.to_decimal(&mut buf))
        }
    }

    struct IdVisitor;

    impl Visitor<'_> for IdVisitor {
        type Value = Id;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a Snowflake ID as a decimal or 0x-hexadecimal string, or an integer")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
            Id::parse(v).map_err(E::custom)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
            Ok(Id(v))
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
            u64::try_from(v)
                .map(Id)
                .map_err(|_| E::custom(format_args!("id {v} is negative")))
        }
    }

    impl<'de> Deserialize<'de> for Id {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
            deserializer.deserialize_any(IdVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_decimal_and_hex() {
        assert_eq!(Id::parse("0").unwrap().get(), 0);
        assert_eq!(Id::parse("18446744073709551615").unwrap().get(), u64::MAX);
        assert_eq!(Id::parse("0xFFFFFFFFFFFFFFFF").unwrap().get(), u64::MAX);
        assert_eq!(Id::parse("0Xff").unwrap().get(), 255);
        assert_eq!(Id::parse("007").unwrap().get(), 7);
    }

    #[test]
    fn rejects_bad_input_with_the_value() {
        for bad in [
            "",
            "0x",
            "-1",
            "+1",
            "1.5",
            "abc",
            " 1",
            "0x1g",
            "18446744073709551616",
            "0x10000000000000000",
        ] {
            let err = Id::parse(bad).unwrap_err();
            assert_eq!(err.field(), Some("id"), "{bad}");
            assert!(
                err.to_string().starts_with(&alloc::format!("id {bad:?}")),
                "{err}"
            );
        }
    }

    #[test]
    fn decimal_buffer_matches_display() {
        let mut buf = [0u8; 20];
        for v in [0, 9, 10, 4194439168, u64::MAX] {
            assert_eq!(Id(v).to_decimal(&mut buf), Id(v).to_string());
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_uses_decimal_strings() {
        let id = Id(1541815603606036480);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"1541815603606036480\"");
        assert_eq!(serde_json::from_str::<Id>(&json).unwrap(), id);
        assert_eq!(serde_json::from_str::<Id>("\"0x10\"").unwrap(), Id(16));
        assert_eq!(serde_json::from_str::<Id>("42").unwrap(), Id(42));
        assert!(serde_json::from_str::<Id>("\"x\"").is_err());
        assert!(serde_json::from_str::<Id>("-1").is_err());
    }
}

//! `Id::parse`, the one ID parser behind `FromStr`, serde, the CLI and the
//! HTTP path: it never panics, what it accepts prints back to itself in
//! decimal and hexadecimal, and it agrees with the standard library's integer
//! parsers on the inputs both understand.
//!
//! The input bytes are the string, so a crash artifact reads as the ID text.

use snowflake::Id;

/// The property, on one input.
pub fn run(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Id::parse(s);
    assert_eq!(s.parse::<Id>(), parsed, "FromStr is not Id::parse");
    assert_eq!(Id::try_from(s), parsed, "TryFrom<&str> is not Id::parse");

    // `u64::from_str` and `from_str_radix` also take a leading `+`, which the
    // ID parser rejects, so the oracle only sees bare digits.
    // Nor does it take more digits than u64::MAX has (20, or 16 in hex),
    // leading zeros included, where the standard library takes any number.
    let (digits, radix, most) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16, 16),
        None => (s, 10, 20),
    };
    let bare = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    if bare {
        let expected = u64::from_str_radix(digits, radix)
            .ok()
            .filter(|_| digits.len() <= most)
            .map(Id::new);
        assert_eq!(
            parsed.as_ref().ok(),
            expected.as_ref(),
            "{s:?} (radix {radix})"
        );
    } else {
        assert!(
            parsed.is_err(),
            "{s:?} is not a number but parsed as {parsed:?}"
        );
    }

    let id = match parsed {
        Ok(id) => id,
        Err(err) => {
            assert_eq!(err.field(), Some("id"), "{s:?}: {err}");
            assert!(
                err.to_string().starts_with(&super::named_id(s)),
                "{s:?}: {err}"
            );
            return;
        }
    };

    let decimal = id.to_string();
    assert_eq!(Id::parse(&decimal).ok(), Some(id), "{decimal}");
    let mut buf = [0u8; 20];
    assert_eq!(id.to_decimal(&mut buf), decimal);
    for hex in [format!("{id:#x}"), format!("{id:#X}")] {
        assert_eq!(Id::parse(&hex).ok(), Some(id), "{hex}");
    }

    let json = serde_json::to_string(&id).expect("an Id serialises");
    assert_eq!(json, format!("\"{decimal}\""));
    assert_eq!(serde_json::from_str::<Id>(&json).ok(), Some(id), "{json}");
    assert_eq!(
        serde_json::from_str::<Id>(&decimal).ok(),
        Some(id),
        "{decimal}"
    );
}

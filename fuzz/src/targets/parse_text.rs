//! `TextForm::parse` and `TextForm::encode`, the text forms behind
//! `--format` and `format=`: the parser never panics, every error names the
//! input as `id "..."`, and what it accepts is the number the form's digits
//! spell, written back at the form's width. For base32 and base62 the
//! written text sorts as the IDs do.
//!
//! The first byte picks the form, the rest is the text, so a crash artifact
//! reads as the ID text after one byte.

use snowflake::{Id, TextForm};

/// The value the text spells in the form, computed the slow way: `None`
/// when a character is outside the alphabet or the value passes 64 bits.
fn oracle(form: TextForm, text: &str) -> Option<u128> {
    let (alphabet, radix): (&str, u128) = match form {
        TextForm::Decimal => ("0123456789", 10),
        TextForm::Hex => ("0123456789abcdef", 16),
        TextForm::Base32 => ("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 32),
        TextForm::Base62 => (
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            62,
        ),
        TextForm::Base58 => (
            "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
            58,
        ),
    };
    let digits = match form {
        TextForm::Hex => text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(text)
            .to_ascii_lowercase(),
        TextForm::Base32 => text
            .to_ascii_uppercase()
            .replace(['I', 'L'], "1")
            .replace('O', "0"),
        _ => text.to_string(),
    };
    // No form reads more digits than the largest ID has in it: 20, 16, 13,
    // 11 and 11.
    let most = match form {
        TextForm::Decimal => 20,
        TextForm::Hex => 16,
        TextForm::Base32 => 13,
        TextForm::Base62 | TextForm::Base58 => 11,
    };
    if digits.is_empty() || digits.len() > most {
        return None;
    }
    let mut value: u128 = 0;
    for c in digits.chars() {
        value = value * radix + alphabet.find(c)? as u128;
        if value > u128::from(u64::MAX) {
            return None;
        }
    }
    Some(value)
}

/// The property, on one input.
pub fn run(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let form = TextForm::ALL[usize::from(pick) % TextForm::ALL.len()];
    let parsed = form.parse(text);
    assert_eq!(Id::parse_as(text, Some(form)), parsed);
    assert_eq!(
        parsed.as_ref().ok().map(|id| u128::from(id.get())),
        oracle(form, text),
        "{form} {text:?}: {parsed:?}"
    );
    match parsed {
        Ok(id) => {
            let mut buf = [0u8; TextForm::MAX_LEN];
            let written = form.encode(id, &mut buf).to_string();
            assert_eq!(form.parse(&written).ok(), Some(id), "{form} {written}");
            if let Some(width) = form.fixed_width() {
                assert_eq!(written.len(), width, "{form} {written}");
                // Sort order: the neighbours' text sorts around this one.
                for other in [id.get().wrapping_sub(1), id.get().wrapping_add(1)] {
                    let other = Id::new(other);
                    assert_eq!(
                        other.to_text(form).cmp(&written),
                        other.cmp(&id),
                        "{form} {other} vs {id}"
                    );
                }
            }
        }
        Err(err) => {
            assert_eq!(err.field(), Some("id"), "{form} {text:?}: {err}");
            assert!(
                err.to_string().starts_with(&super::named_id(text)),
                "{form} {text:?}: {err}"
            );
            assert!(err.to_string().contains(form.name()), "{form}: {err}");
        }
    }
}

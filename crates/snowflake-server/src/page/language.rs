//! Which of the page's languages a request prefers.
//!
//! The `accept-language` crate reads the header (tags, `q` weights, order by
//! weight); what stays here is the choice among the page's own languages,
//! RFC 4647's lookup: a range such as `de-AT` is cut back subtag by subtag
//! until it names one of them (`de`), `*` takes the first, and a range with
//! `q=0` is one the browser refuses, so it is never chosen.

/// The page's languages; the first is the default.
pub const LANGUAGES: [&str; 2] = ["en", "de"];

/// The page's language that the `Accept-Language` value prefers, or English.
pub fn negotiate(accept: &str) -> &'static str {
    for (range, quality) in accept_language::parse_with_quality(accept) {
        if quality <= 0.0 {
            continue;
        }
        if let Some(lang) = lookup(&range) {
            return lang;
        }
    }
    LANGUAGES[0]
}

fn lookup(range: &str) -> Option<&'static str> {
    if range == "*" {
        return Some(LANGUAGES[0]);
    }
    let mut range = range;
    loop {
        if let Some(lang) = LANGUAGES.iter().find(|l| l.eq_ignore_ascii_case(range)) {
            return Some(lang);
        }
        range = &range[..range.rfind('-')?];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_among_the_page_languages() {
        for (accept, expected) in [
            // German only when preferred.
            ("de-DE,de;q=0.9,en;q=0.8", "de"),
            ("en-US,en;q=0.9,de;q=0.8", "en"),
            ("fr-FR,de;q=0.5", "de"),
            ("fr", "en"),
            ("", "en"),
            // Weights decide before order.
            ("en;q=0.2, de;q=0.9", "de"),
            ("en;q=0.9, DE-at;q=1", "de"),
            // Ranges are cut back subtag by subtag.
            ("de-Latn-AT", "de"),
            ("dexx, de-CH", "de"),
            ("en-GB-oxendict", "en"),
            // Refused and broken ranges are not chosen.
            ("de;q=0, fr", "en"),
            ("de;q=zero", "en"),
            ("*;q=0.5, fr", "en"),
            (",,;q=1,", "en"),
            ("-, x-", "en"),
        ] {
            assert_eq!(negotiate(accept), expected, "Accept-Language: {accept:?}");
        }
    }
}

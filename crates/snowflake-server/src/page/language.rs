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
    fn picks_german_only_when_preferred() {
        assert_eq!(negotiate("de-DE,de;q=0.9,en;q=0.8"), "de");
        assert_eq!(negotiate("en-US,en;q=0.9,de;q=0.8"), "en");
        assert_eq!(negotiate("fr-FR,de;q=0.5"), "de");
        assert_eq!(negotiate("fr"), "en");
        assert_eq!(negotiate(""), "en");
    }

    #[test]
    fn weights_decide_before_order() {
        assert_eq!(negotiate("en;q=0.2, de;q=0.9"), "de");
        assert_eq!(negotiate("en;q=0.9, DE-at;q=1"), "de");
    }

    #[test]
    fn ranges_are_cut_back_subtag_by_subtag() {
        assert_eq!(negotiate("de-Latn-AT"), "de");
        assert_eq!(negotiate("dexx, de-CH"), "de");
        assert_eq!(negotiate("en-GB-oxendict"), "en");
    }

    #[test]
    fn refused_and_broken_ranges_are_not_chosen() {
        assert_eq!(negotiate("de;q=0, fr"), "en");
        assert_eq!(negotiate("de;q=zero"), "en");
        assert_eq!(negotiate("*;q=0.5, fr"), "en");
        assert_eq!(negotiate(",,;q=1,"), "en");
        assert_eq!(negotiate("-, x-"), "en");
    }
}

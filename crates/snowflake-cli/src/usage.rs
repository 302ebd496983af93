//! The command's own usage errors: arguments it refuses for reasons of its
//! own (how its inputs combine, a URL it cannot check), in its own words.
//! A value the core refuses (a field out of range, an unknown layout) stays
//! the core's `snowflake::Error`; both read alike and exit with status 2.

use std::fmt;

/// An argument the command refuses: the field, the value given and what
/// is allowed, as `id - is not allowed; - reads IDs from stdin and comes
/// alone, without other IDs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError {
    field: &'static str,
    value: String,
    allowed: String,
}

impl UsageError {
    /// `field` (as the flag is named, without dashes) was given `value`,
    /// which is not `allowed`.
    pub fn new(field: &'static str, value: &str, allowed: impl Into<String>) -> Self {
        UsageError {
            field,
            value: value.into(),
            allowed: allowed.into(),
        }
    }

    /// The argument at fault, such as `url` or `layout`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn field(&self) -> &'static str {
        self.field
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} is not allowed; {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for UsageError {}

#[cfg(test)]
mod tests {
    use super::UsageError;

    #[test]
    fn it_reads_as_the_cores_refusals_do() {
        let err = UsageError::new("file", "-", "- reads IDs from stdin and comes alone");
        assert_eq!(err.field(), "file");
        assert_eq!(
            err.to_string(),
            "file - is not allowed; - reads IDs from stdin and comes alone"
        );
        // Worded as the core words the settings it refuses.
        assert_eq!(
            err.to_string(),
            snowflake::Error::invalid_value("file", "-", "- reads IDs from stdin and comes alone")
                .to_string()
        );
    }
}

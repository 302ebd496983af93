//! The planner's errors: requirements it cannot plan for.
//!
//! # Design
//! Like the core's [`snowflake::Error`], one opaque value over a private
//! kind, so that a new kind of refusal is not a breaking change, worded
//! the same way (`rate 0 is not allowed; a peak rate is at least 1 ID a
//! second`): field, value, what is allowed. The planner has its own type
//! because its vocabulary (rate, nodes, years) is not the core's; an audit
//! passes on the core's own error for an ID its layout cannot decode.

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

/// Requirements the planner refuses, with the field, the value and what is
/// allowed.
///
/// ```
/// let err = snowflake_ops::Requirements::new(1, 0, 10, 0).unwrap_err();
/// assert_eq!(err.field(), "nodes");
/// assert_eq!(err.to_string(), "nodes 0 is not allowed; a plan is for at least 1 node");
/// assert_eq!(format!("{err:?}"), "Error(nodes 0 is not allowed; a plan is for at least 1 node)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Kind>);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// A requirement out of the range a plan is made for.
    Invalid {
        field: &'static str,
        value: String,
        allowed: &'static str,
    },
}

impl Error {
    /// A requirement `field` whose `value` is not `allowed`.
    pub(crate) fn invalid(field: &'static str, value: &str, allowed: &'static str) -> Self {
        Error(Box::new(Kind::Invalid {
            field,
            value: value.into(),
            allowed,
        }))
    }

    /// The requirement at fault: `rate`, `nodes`, `years`, `from` or
    /// `tick_ms`.
    ///
    /// ```
    /// let err = snowflake_ops::Requirements::new(1, 1, 0, 0).unwrap_err();
    /// assert_eq!(err.field(), "years");
    /// ```
    pub fn field(&self) -> &str {
        match &*self.0 {
            Kind::Invalid { field, .. } => field,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Kind::Invalid {
                field,
                value,
                allowed,
            } => write!(f, "{field} {value} is not allowed; {allowed}"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The message, as the core's error shows it, so that `?` in a test
        // or `main` reads well.
        write!(f, "Error({self})")
    }
}

impl core::error::Error for Error {}

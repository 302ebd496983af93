use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::time::UnixMillis;

/// Everything that can go wrong in this crate, as one opaque value.
///
/// Messages are lower-case and name the field, the value and what is allowed,
/// e.g. `machine 32 is out of range: 0 to 31 (5 bits)`. Match on [`Error::kind`]
/// and read [`Error::field`] rather than on the text.
///
/// ```
/// use snowflake::{ErrorKind, Layout};
///
/// let err = Layout::twitter().compose(1288834975657, &[("machine", 32)]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidInput);
/// assert_eq!(err.field(), Some("machine"));
/// assert_eq!(err.to_string(), "machine 32 is out of range: 0 to 31 (5 bits)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Repr>);

/// Why a text is not an ID in a form; worded by `Error`'s `Display`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextProblem {
    Empty,
    Negative,
    BadChar(char),
    TooLong(usize),
    TooLarge,
}

/// The broad class of an [`Error`], for callers that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A value given by the caller is not allowed: out of range, malformed,
    /// an unknown field or layout. Front ends report it as a usage error.
    InvalidInput,
    /// The clock went backwards by more than the generator tolerates.
    ClockBackwards,
    /// The layout's time field cannot represent the current time any more.
    TimeExhausted,
    /// The high-water mark store failed, or its mark is ahead of the clock.
    Store,
    /// The high-water mark store is in use by another generator, in this
    /// process or another: one store serves one generator at a time.
    StoreInUse,
}

// Without `std` there is no generator, so its variants go unused.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Repr {
    OutOfRange {
        field: String,
        value: String,
        max: u64,
        bits: u8,
    },
    NotANumber {
        field: String,
        value: String,
        max: u64,
        bits: u8,
    },
    UnknownField {
        field: String,
        known: Vec<String>,
    },
    DuplicateField {
        field: String,
    },
    BeforeEpoch {
        timestamp: i64,
        epoch: i64,
    },
    AfterEnd {
        timestamp: i64,
        last: i64,
    },
    InvalidTimestamp {
        field: &'static str,
        value: String,
    },
    InvalidWindow {
        from: i64,
        to: i64,
    },
    InvalidText {
        value: String,
        form: &'static str,
        allowed: &'static str,
        problem: TextProblem,
        /// The forms that must be named, when the text may be in one of
        /// them (letters in what was read as a number).
        hint: Option<&'static [&'static str]>,
    },
    SignBitSet {
        id: u64,
        layout: String,
    },
    TooWide {
        id: u64,
        layout: String,
        bits: u8,
        max: u64,
    },
    InvalidLayout {
        message: String,
    },
    UnknownLayout {
        name: String,
        /// The preset names to offer, from the table of presets.
        presets: &'static [&'static str],
    },
    NoSequence {
        layout: String,
    },
    UnknownTextForm {
        value: String,
        /// The forms to offer, from the list of forms.
        forms: &'static [&'static str],
    },
    InvalidSetting {
        field: &'static str,
        value: String,
        allowed: &'static str,
    },
    ClockBackwards {
        by_ms: u64,
        tolerance_ms: u64,
    },
    TimeExhausted {
        last: i64,
    },
    MarkAhead {
        mark_ms: i64,
        now_ms: i64,
        tolerance_ms: u64,
    },
    Store {
        message: String,
        /// Retrying cannot help: the store stopped for good.
        lasting: bool,
    },
    /// Another generator uses the store; the store says which and how it
    /// knows, in `message`.
    StoreInUse {
        message: String,
    },
}

impl Error {
    pub(crate) fn new(repr: Repr) -> Self {
        Error(Box::new(repr))
    }

    /// The broad class of this error.
    ///
    /// ```
    /// use snowflake::{ErrorKind, Id};
    ///
    /// let err = "12x".parse::<Id>().unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidInput);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match &*self.0 {
            Repr::ClockBackwards { .. } => ErrorKind::ClockBackwards,
            Repr::TimeExhausted { .. } => ErrorKind::TimeExhausted,
            Repr::MarkAhead { .. } | Repr::Store { .. } => ErrorKind::Store,
            Repr::StoreInUse { .. } => ErrorKind::StoreInUse,
            _ => ErrorKind::InvalidInput,
        }
    }

    /// The input at fault, where there is one: a field name such as
    /// `machine`, or `timestamp`, `id`, `layout`, `from`, `to`.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// let err = Layout::twitter().compose(0, &[]).unwrap_err();
    /// assert_eq!(err.field(), Some("timestamp"));
    /// ```
    pub fn field(&self) -> Option<&str> {
        self.at_fault().map(|(field, _)| field)
    }

    /// The value at fault, as the caller gave it and the message names it,
    /// where there is one: `32` for `machine 32 is out of range`, the text
    /// of an ID that is not one, the name of an unknown layout or field.
    /// `None` for a malformed layout spec (the message says which part is
    /// wrong) and for errors that no input caused.
    ///
    /// ```
    /// use snowflake::{Id, Layout};
    ///
    /// let err = Layout::twitter().compose(1288834975657, &[("machine", 32)]).unwrap_err();
    /// assert_eq!(err.value().as_deref(), Some("32"));
    /// let err = Id::parse("12x").unwrap_err();
    /// assert_eq!(err.value().as_deref(), Some("12x"));
    /// assert_eq!(Layout::parse("time:41,machine").unwrap_err().value(), None);
    /// ```
    pub fn value(&self) -> Option<String> {
        self.at_fault().and_then(|(_, value)| value)
    }

    /// The input at fault and the value it was given, from one match, so
    /// that [`Error::field`] and [`Error::value`] always speak of the same
    /// input; `None` for errors that no input caused.
    fn at_fault(&self) -> Option<(&str, Option<String>)> {
        let (field, value) = match &*self.0 {
            Repr::OutOfRange { field, value, .. } | Repr::NotANumber { field, value, .. } => {
                (field.as_str(), value.clone())
            }
            Repr::UnknownField { field, .. } | Repr::DuplicateField { field } => {
                (field.as_str(), field.clone())
            }
            Repr::InvalidTimestamp { field, value } | Repr::InvalidSetting { field, value, .. } => {
                (*field, value.clone())
            }
            Repr::BeforeEpoch { timestamp, .. } | Repr::AfterEnd { timestamp, .. } => {
                ("timestamp", timestamp.to_string())
            }
            Repr::UnknownTextForm { value, .. } => ("format", value.clone()),
            Repr::InvalidWindow { from, .. } => ("from", from.to_string()),
            Repr::InvalidText { value, .. } => ("id", value.clone()),
            Repr::SignBitSet { id, .. } | Repr::TooWide { id, .. } => ("id", id.to_string()),
            Repr::UnknownLayout { name, .. } => ("layout", name.clone()),
            Repr::NoSequence { layout } => ("layout", layout.clone()),
            // The message says which part of the spec is wrong.
            Repr::InvalidLayout { .. } => return Some(("layout", None)),
            Repr::ClockBackwards { .. }
            | Repr::TimeExhausted { .. }
            | Repr::MarkAhead { .. }
            | Repr::Store { .. }
            | Repr::StoreInUse { .. } => return None,
        };
        Some((field, Some(value)))
    }

    /// For a clock that went backwards, by how many milliseconds.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use snowflake::{Generator, Layout, ManualClock};
    ///
    /// let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    /// let generator = Generator::builder(Layout::twitter()).clock(clock.clone()).build()?;
    /// generator.next_id()?;
    /// clock.set(1_700_000_000_000 - 60_000);
    /// let err = generator.next_id().unwrap_err();
    /// assert_eq!(err.clock_backwards_ms(), Some(60_000));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn clock_backwards_ms(&self) -> Option<u64> {
        match &*self.0 {
            Repr::ClockBackwards { by_ms, .. } => Some(*by_ms),
            _ => None,
        }
    }

    /// The error for a time that front ends could not parse, so that the CLI
    /// and the HTTP API word it the same way. `field` names the input, such
    /// as `from`.
    ///
    /// ```
    /// let err = snowflake::Error::invalid_time("from", "yesterday");
    /// assert_eq!(err.field(), Some("from"));
    /// assert!(err.to_string().starts_with("from \"yesterday\" is not a time"));
    /// ```
    pub fn invalid_time(field: &'static str, value: &str) -> Self {
        Error::new(Repr::InvalidTimestamp {
            field,
            value: value.into(),
        })
    }

    /// The error for a setting that front ends could not accept, worded like
    /// the core's own: `count 0 is not allowed; a count is 1 to 100000`.
    ///
    /// ```
    /// let err = snowflake::Error::invalid_value("count", "0", "a count is 1 to 100000");
    /// assert_eq!(err.to_string(), "count 0 is not allowed; a count is 1 to 100000");
    /// assert_eq!(err.field(), Some("count"));
    /// ```
    pub fn invalid_value(field: &'static str, value: &str, allowed: &'static str) -> Self {
        Error::new(Repr::InvalidSetting {
            field,
            value: value.into(),
            allowed,
        })
    }

    /// The error for a [`MarkStore`](crate::MarkStore) that could not read or
    /// write its mark; its kind is [`ErrorKind::Store`].
    ///
    /// ```
    /// let err = snowflake::Error::store_failure("etcd did not answer in time");
    /// assert_eq!(err.kind(), snowflake::ErrorKind::Store);
    /// ```
    pub fn store_failure(message: impl Into<String>) -> Self {
        Error::store(message)
    }

    /// The error for a [`MarkStore`](crate::MarkStore) that will never
    /// write again until an operator acts: its stored mark is damaged, or
    /// another writer may hold it. Its kind is [`ErrorKind::Store`], and
    /// [`Error::needs_operator`] says so.
    ///
    /// ```
    /// let err = snowflake::Error::store_stopped("marks/1 holds no mark");
    /// assert_eq!(err.kind(), snowflake::ErrorKind::Store);
    /// assert!(err.needs_operator());
    /// assert!(!snowflake::Error::store_failure("etcd did not answer").needs_operator());
    /// ```
    pub fn store_stopped(message: impl Into<String>) -> Self {
        Error::new(Repr::Store {
            message: message.into(),
            lasting: true,
        })
    }

    /// The error for a [`MarkStore`](crate::MarkStore) that another
    /// generator uses, in this process or another, so that this one must
    /// not start: `message` says which and how the store knows. Its kind is
    /// [`ErrorKind::StoreInUse`], and [`Error::needs_operator`] says so.
    ///
    /// ```
    /// use snowflake::{Error, ErrorKind};
    ///
    /// let err = Error::store_in_use("marks/1 is held by process 812");
    /// assert_eq!(err.kind(), ErrorKind::StoreInUse);
    /// assert_eq!(err.to_string(), "high-water mark store: marks/1 is held by process 812");
    /// assert!(err.needs_operator());
    /// ```
    pub fn store_in_use(message: impl Into<String>) -> Self {
        Error::new(Repr::StoreInUse {
            message: message.into(),
        })
    }

    /// Whether waiting cannot make the failed call succeed, so that an
    /// operator must act: the clock reads a time the layout cannot hold,
    /// its time field is used up, or the mark store is another's or has
    /// stopped for good. A service answers such errors without a
    /// `Retry-After`; a clock behind, or a store that failed once, may
    /// recover by themselves.
    ///
    /// ```
    /// use snowflake::{Error, Layout};
    ///
    /// let err = Layout::twitter().compose(0, &[]).unwrap_err();
    /// assert!(err.needs_operator());
    /// assert!(!Error::store_failure("disk full").needs_operator());
    /// ```
    pub fn needs_operator(&self) -> bool {
        match &*self.0 {
            Repr::ClockBackwards { .. } | Repr::MarkAhead { .. } => false,
            Repr::Store { lasting, .. } => *lasting,
            _ => true,
        }
    }

    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn store(message: impl Into<String>) -> Self {
        Error::new(Repr::Store {
            message: message.into(),
            lasting: false,
        })
    }

    pub(crate) fn invalid_layout(message: impl Into<String>) -> Self {
        Error::new(Repr::InvalidLayout {
            message: message.into(),
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Repr::OutOfRange {
                field,
                value,
                max,
                bits,
            } => write!(
                f,
                "{field} {value} is out of range: 0 to {max} ({bits} bits)"
            ),
            Repr::NotANumber {
                field,
                value,
                max,
                bits,
            } => write!(
                f,
                "{field} {} is not a whole number; allowed is 0 to {max} ({bits} bits)",
                Quoted(value)
            ),
            Repr::UnknownField { field, known } => {
                write!(
                    f,
                    "the layout has no field {}; its fields are ",
                    Quoted(field)
                )?;
                write_list(f, known)
            }
            Repr::DuplicateField { field } => {
                write!(f, "{field} is given more than once; give each field once")
            }
            Repr::BeforeEpoch { timestamp, epoch } => write!(
                f,
                "timestamp {timestamp} ({}) is before the layout's epoch {epoch} ({})",
                UnixMillis(*timestamp),
                UnixMillis(*epoch)
            ),
            Repr::AfterEnd { timestamp, last } => write!(
                f,
                "timestamp {timestamp} ({}) is after the last time the layout can encode, {last} ({})",
                UnixMillis(*timestamp),
                UnixMillis(*last)
            ),
            Repr::InvalidTimestamp { field, value } => write!(
                f,
                "{field} {} is not a time; give Unix milliseconds or an RFC 3339 date such as 2024-01-31T12:00:00Z",
                Quoted(value)
            ),
            Repr::InvalidWindow { from, to } => write!(
                f,
                "from {from} ({}) is after to {to} ({})",
                UnixMillis(*from),
                UnixMillis(*to)
            ),
            Repr::InvalidText {
                value,
                form,
                allowed,
                problem,
                hint,
            } => {
                match problem {
                    TextProblem::Empty => write!(f, "id {} is empty", Quoted(value))?,
                    TextProblem::Negative => write!(f, "id {} is negative", Quoted(value))?,
                    TextProblem::BadChar(c) => {
                        write!(
                            f,
                            "id {} is not {form}: {c:?} is not allowed",
                            Quoted(value)
                        )?;
                    }
                    TextProblem::TooLong(n) => {
                        write!(
                            f,
                            "id {} is not {form}: it is {n} characters long",
                            Quoted(value)
                        )?;
                    }
                    TextProblem::TooLarge => write!(
                        f,
                        "id {} does not fit in 64 bits; IDs are 0 to 18446744073709551615",
                        Quoted(value)
                    )?,
                }
                write!(f, "; {allowed}")?;
                if let Some(forms) = hint {
                    f.write_str(" (name the form to read ")?;
                    write_or_list(f, forms.iter().copied())?;
                    f.write_str(")")?;
                }
                Ok(())
            }
            Repr::SignBitSet { id, layout } => write!(
                f,
                "id {id} has the sign bit set, but layout {layout} keeps it 0; its IDs are 0 to {}",
                i64::MAX
            ),
            Repr::TooWide {
                id,
                layout,
                bits,
                max,
            } => write!(
                f,
                "id {id} has bits set above its lowest {bits}, but layout {layout} uses only \
                 {bits} bits and keeps the rest 0; its IDs are 0 to {max}"
            ),
            Repr::InvalidLayout { message } => write!(f, "invalid layout: {message}"),
            Repr::UnknownLayout { name, presets } => {
                write!(f, "unknown layout {name:?}; use a preset (")?;
                write_list(f, presets)?;
                f.write_str(
                    ") or fields most significant first, like time:41,datacenter:5,machine:5,sequence:12",
                )
            }
            Repr::NoSequence { layout } => write!(
                f,
                "layout {layout} has no sequence field, so it can compose and decode but not generate; \
                 name one of its fields \"sequence\""
            ),
            Repr::InvalidSetting {
                field,
                value,
                allowed,
            } => write!(f, "{field} {} is not allowed; {allowed}", Elided(value)),
            Repr::UnknownTextForm { value, forms } => {
                write!(
                    f,
                    "format {} is not allowed; a text form is ",
                    Elided(value)
                )?;
                write_or_list(f, forms.iter().copied())
            }
            Repr::ClockBackwards {
                by_ms,
                tolerance_ms,
            } => write!(
                f,
                "the clock went backwards by {by_ms} ms, more than the {tolerance_ms} ms tolerated; \
                 refusing to issue IDs until it catches up"
            ),
            Repr::TimeExhausted { last } => write!(
                f,
                "the layout's time field ran out at {last} ({}); no more IDs can be issued",
                UnixMillis(*last)
            ),
            Repr::MarkAhead {
                mark_ms,
                now_ms,
                tolerance_ms,
            } => write!(
                f,
                "the clock ({now_ms}, {}) is {} ms behind the high-water mark {mark_ms} ({}) left by \
                 an earlier run, more than the {tolerance_ms} ms tolerated; refusing to start",
                UnixMillis(*now_ms),
                mark_ms.saturating_sub(*now_ms),
                UnixMillis(*mark_ms)
            ),
            Repr::Store { message, .. } => write!(f, "high-water mark store: {message}"),
            Repr::StoreInUse { message } => write!(f, "high-water mark store: {message}"),
        }
    }
}

/// How much of a value a message shows: values longer than this are cut,
/// so that a megabyte pasted by mistake is not written back whole into a
/// log, a terminal or a response ([`Error::value`] keeps it whole).
const SHOWN_CHARS: usize = 64;

/// `value` as a message shows it: whole, or its first [`SHOWN_CHARS`]
/// characters and an ellipsis.
fn shown(value: &str) -> (&str, bool) {
    match value.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => (&value[..cut], true),
        None => (value, false),
    }
}

/// A value quoted as `{:?}` quotes it, cut after [`SHOWN_CHARS`] characters.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match shown(self.0) {
            (whole, false) => write!(f, "{whole:?}"),
            (start, true) => write!(f, "\"{}…\"", start.escape_debug()),
        }
    }
}

/// A value as it is, cut after [`SHOWN_CHARS`] characters.
struct Elided<'a>(&'a str);

impl fmt::Display for Elided<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match shown(self.0) {
            (whole, false) => f.write_str(whole),
            (start, true) => write!(f, "{start}…"),
        }
    }
}

/// `a, b or c`.
fn write_or_list<'a>(
    f: &mut fmt::Formatter<'_>,
    items: impl ExactSizeIterator<Item = &'a str>,
) -> fmt::Result {
    let last = items.len().saturating_sub(1);
    for (i, item) in items.enumerate() {
        let before = match i {
            0 => "",
            _ if i == last => " or ",
            _ => ", ",
        };
        write!(f, "{before}{item}")?;
    }
    Ok(())
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[impl AsRef<str>]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(item.as_ref())?;
    }
    Ok(())
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug shows the message too, so `?` in a test or `main` reads well.
        f.debug_tuple("Error")
            .field(&format_args!("{self}"))
            .finish()
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use alloc::string::{String, ToString};

    use crate::{Error, Id};

    #[test]
    fn a_long_value_is_cut_in_the_message_and_kept_whole_by_value() {
        let pasted = "é".repeat(100) + &"x".repeat(100_000);
        let err = Id::parse(&pasted).unwrap_err();
        let cut = "é".repeat(64);
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "id \"{cut}…\" is not decimal: 'é' is not allowed;"
            )),
            "{message}"
        );
        assert!(message.len() < 400, "{message}");
        assert_eq!(err.value(), Some(pasted.clone()));
        let err = Error::invalid_value("cluster", &pasted, "a cluster name is ...");
        assert_eq!(
            err.to_string(),
            format!("cluster {cut}… is not allowed; a cluster name is ...")
        );
        // Up to the limit a value is shown whole; one character more is cut.
        let at_limit: String = "7".repeat(63) + "x";
        let err = Id::parse(&at_limit).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!("id {at_limit:?} ")),
            "{err}"
        );
        let over = at_limit + "x";
        let err = Id::parse(&over).unwrap_err();
        let cut = format!("id \"{}…\" ", &over[..64]);
        assert!(err.to_string().starts_with(&cut), "{err}");
    }
}

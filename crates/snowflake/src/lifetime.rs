//! How long a layout's time field lasts: the one computation of "time left"
//! that `snowflake layouts`, the planner and the service all show.

use core::fmt;

use crate::layout::Layout;
use crate::time::UnixMillis;

/// How long a layout's time field lasts from a given moment: when it runs
/// out, and how much time that leaves. See [`Layout::time_left`].
///
/// It displays as a span in the largest unit that reads well (`55.9 years`,
/// `8 months`, `12 days`), or as `ran out at <date>` once it has.
///
/// ```
/// use snowflake::{Layout, TimeLeft};
///
/// // Twitter's layout, seen on 2025-01-01.
/// let left = Layout::twitter().time_left(1735689600000);
/// assert_eq!(left.runs_out_ms(), 3487858230209);
/// assert_eq!(left.to_string(), "55.5 years");
/// assert!(!left.is_short());
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeLeft {
    now_ms: i64,
    runs_out_ms: i64,
}

impl TimeLeft {
    /// Milliseconds in a mean Gregorian year (365.2425 days), the year that
    /// spans and lifetimes are counted in.
    ///
    /// ```
    /// assert_eq!(snowflake::TimeLeft::MS_PER_YEAR, 31_556_952_000);
    /// ```
    pub const MS_PER_YEAR: u64 = 31_556_952_000;

    /// What counts as short: less than a year left.
    ///
    /// ```
    /// assert_eq!(snowflake::TimeLeft::SHORT_MS, snowflake::TimeLeft::MS_PER_YEAR);
    /// ```
    pub const SHORT_MS: u64 = TimeLeft::MS_PER_YEAR;

    /// The time left from `now_ms` until `runs_out_ms`, both Unix
    /// milliseconds; [`Layout::time_left`] is the usual way to get one.
    ///
    /// ```
    /// let left = snowflake::TimeLeft::new(0, 86_400_000 * 3);
    /// assert_eq!(left.to_string(), "3 days");
    /// ```
    pub const fn new(now_ms: i64, runs_out_ms: i64) -> TimeLeft {
        TimeLeft {
            now_ms,
            runs_out_ms,
        }
    }

    /// The moment it was measured from, Unix milliseconds.
    ///
    /// ```
    /// assert_eq!(snowflake::TimeLeft::new(5, 10).now_ms(), 5);
    /// ```
    pub const fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// The first Unix millisecond the time field cannot hold.
    ///
    /// ```
    /// assert_eq!(snowflake::TimeLeft::new(5, 10).runs_out_ms(), 10);
    /// ```
    pub const fn runs_out_ms(&self) -> i64 {
        self.runs_out_ms
    }

    /// Milliseconds left; 0 once it has run out.
    ///
    /// ```
    /// use snowflake::TimeLeft;
    ///
    /// assert_eq!(TimeLeft::new(5, 10).ms(), 5);
    /// assert_eq!(TimeLeft::new(10, 5).ms(), 0);
    /// ```
    pub const fn ms(&self) -> u64 {
        if self.runs_out_ms > self.now_ms {
            self.runs_out_ms.abs_diff(self.now_ms)
        } else {
            0
        }
    }

    /// Years left, in mean Gregorian years; 0 once it has run out.
    ///
    /// ```
    /// use snowflake::TimeLeft;
    ///
    /// assert_eq!(TimeLeft::new(0, TimeLeft::MS_PER_YEAR as i64 * 3 / 2).years(), 1.5);
    /// ```
    pub fn years(&self) -> f64 {
        self.ms() as f64 / TimeLeft::MS_PER_YEAR as f64
    }

    /// Whether the time field has run out: `now` is at or past its end.
    ///
    /// ```
    /// use snowflake::TimeLeft;
    ///
    /// assert!(TimeLeft::new(10, 10).is_exhausted());
    /// assert!(!TimeLeft::new(9, 10).is_exhausted());
    /// ```
    pub const fn is_exhausted(&self) -> bool {
        self.now_ms >= self.runs_out_ms
    }

    /// Whether less than [`TimeLeft::SHORT_MS`] (a year) is left, or none.
    ///
    /// ```
    /// use snowflake::{Layout, TimeLeft};
    ///
    /// let js53 = Layout::js53();
    /// let end = js53.runs_out_ms();
    /// assert!(js53.time_left(end - 86_400_000).is_short());
    /// assert!(!js53.time_left(end - 2 * TimeLeft::MS_PER_YEAR as i64).is_short());
    /// ```
    pub const fn is_short(&self) -> bool {
        self.ms() < TimeLeft::SHORT_MS
    }
}

impl fmt::Display for TimeLeft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_exhausted() {
            write!(f, "ran out at {}", UnixMillis(self.runs_out_ms))
        } else {
            write_span(f, self.ms())
        }
    }
}

const MS_PER_MINUTE: u64 = 60_000;
const MS_PER_HOUR: u64 = 60 * MS_PER_MINUTE;
const MS_PER_DAY: u64 = 24 * MS_PER_HOUR;
/// A twelfth of a mean year.
const MS_PER_MONTH: u64 = TimeLeft::MS_PER_YEAR / 12;

/// A span of milliseconds in the largest unit of which there are at least
/// two (one for years, with a decimal), so that it reads as a person would
/// say it: `69.7 years`, `1.2 years`, `8 months`, `12 days`, `5 hours`.
pub(crate) fn write_span(f: &mut fmt::Formatter<'_>, ms: u64) -> fmt::Result {
    let years = ms as f64 / TimeLeft::MS_PER_YEAR as f64;
    if ms >= TimeLeft::MS_PER_YEAR {
        // Below 10,000 years a tenth tells something; beyond, nothing does.
        return if years < 10_000.0 {
            write!(f, "{years:.1} years")
        } else {
            write!(f, "{years:.0} years")
        };
    }
    let (count, unit) = [
        (MS_PER_MONTH, "month"),
        (MS_PER_DAY, "day"),
        (MS_PER_HOUR, "hour"),
        (MS_PER_MINUTE, "minute"),
        (1000, "second"),
    ]
    .into_iter()
    .find(|(size, _)| ms >= 2 * size)
    .map_or((ms, "millisecond"), |(size, unit)| (ms / size, unit));
    let plural = if count == 1 { "" } else { "s" };
    write!(f, "{count} {unit}{plural}")
}

impl Layout {
    /// The first Unix millisecond the time field cannot hold: one past
    /// [`Layout::last_timestamp_ms`]. From then on a generator refuses to
    /// issue IDs.
    ///
    /// ```
    /// use snowflake::{Layout, UnixMillis};
    ///
    /// assert_eq!(UnixMillis(Layout::twitter().runs_out_ms()).to_string(), "2080-07-10T17:30:30.209Z");
    /// ```
    pub fn runs_out_ms(&self) -> i64 {
        // Checked at construction: epoch + 2^time_bits ticks fits in i64.
        self.last_timestamp_ms() + 1
    }

    /// How long the layout lasts from `now_ms` (the caller reads its clock,
    /// so that tests can fix it).
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// // Baidu uid-generator's default: 28 bits of seconds since 2016-05-20.
    /// let baidu = Layout::parse("time:28,worker:22,sequence:13")?
    ///     .with_tick_ms(1000)?
    ///     .with_epoch_ms(1463702400000)?;
    /// let left = baidu.time_left(1735689600000); // 2025-01-01
    /// assert!(left.is_exhausted());
    /// assert_eq!(left.to_string(), "ran out at 2024-11-20T21:24:16.000Z");
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn time_left(&self, now_ms: i64) -> TimeLeft {
        TimeLeft::new(now_ms, self.runs_out_ms())
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::TimeLeft;
    use crate::time::UnixMillis;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeStruct, Serializer};

    /// `{"runs_out_ms","runs_out","left_ms","years_left","left","short"}`:
    /// the one JSON form of the time a layout has left.
    impl Serialize for TimeLeft {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("TimeLeft", 6)?;
            s.serialize_field("runs_out_ms", &self.runs_out_ms)?;
            s.serialize_field("runs_out", &UnixMillis(self.runs_out_ms).to_string())?;
            s.serialize_field("left_ms", &self.ms())?;
            s.serialize_field("years_left", &self.years())?;
            s.serialize_field("left", &self.to_string())?;
            s.serialize_field("short", &self.is_short())?;
            s.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn spans_read_in_the_largest_fitting_unit() {
        let cases = [
            (0, "0 milliseconds"),
            (1, "1 millisecond"),
            (1999, "1999 milliseconds"),
            (2000, "2 seconds"),
            (2 * MS_PER_MINUTE - 1, "119 seconds"),
            (2 * MS_PER_MINUTE, "2 minutes"),
            (2 * MS_PER_HOUR, "2 hours"),
            (2 * MS_PER_DAY - 1, "47 hours"),
            (2 * MS_PER_DAY, "2 days"),
            (2 * MS_PER_MONTH, "2 months"),
            (TimeLeft::MS_PER_YEAR - 1, "11 months"),
            (TimeLeft::MS_PER_YEAR, "1.0 years"),
            (
                TimeLeft::MS_PER_YEAR * 69 + TimeLeft::MS_PER_YEAR / 2,
                "69.5 years",
            ),
            (TimeLeft::MS_PER_YEAR * 123_456, "123456 years"),
        ];
        struct Span(u64);
        impl fmt::Display for Span {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_span(f, self.0)
            }
        }
        for (ms, text) in cases {
            assert_eq!(Span(ms).to_string(), text, "{ms}");
        }
        assert_eq!(TimeLeft::new(0, 2000).to_string(), "2 seconds");
    }

    #[test]
    fn the_end_is_the_first_millisecond_past_the_last() {
        for layout in Layout::presets() {
            let end = layout.runs_out_ms();
            assert_eq!(end, layout.last_timestamp_ms() + 1);
            assert!(layout.time_units(end - 1).is_ok());
            assert!(layout.time_units(end).is_err());
            let left = layout.time_left(end - 1);
            assert_eq!((left.ms(), left.is_exhausted()), (1, false));
            let gone = layout.time_left(end);
            assert_eq!((gone.ms(), gone.is_exhausted()), (0, true));
            assert!(gone.is_short());
            assert_eq!(gone.years(), 0.0);
        }
        let short = TimeLeft::new(0, TimeLeft::SHORT_MS as i64);
        assert!(!short.is_short());
        assert!(TimeLeft::new(1, TimeLeft::SHORT_MS as i64).is_short());
        assert_eq!(
            TimeLeft::new(i64::MIN, i64::MAX).ms(),
            u64::MAX,
            "the whole i64 range is a span, not an overflow"
        );
    }
}

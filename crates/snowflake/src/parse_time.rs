//! A time read from text, as every front end takes one: Unix milliseconds
//! or an RFC 3339 date.
//!
//! Written here by hand, not taken from `jiff` as the command once did: the
//! core has no dependencies, and the WebAssembly module cannot carry jiff's
//! time zone database, yet every front end must read a date alike. The
//! grammar is RFC 3339's and small; a proptest in `snowflake-io` and the
//! fuzz target `parse_time` hold this reader to jiff's on every date both
//! read. It sits beside `time.rs`, not in it, because its errors are the
//! core's and the core's error messages write dates with `time.rs`.

use core::ops::RangeInclusive;

use crate::error::Error;
use crate::time::{MS_PER_DAY, UnixMillis, days_from_civil};

impl UnixMillis {
    /// Reads a time as every front end takes one, `field` naming it in the
    /// error: Unix milliseconds, or an RFC 3339 date
    /// ([`UnixMillis::parse_rfc3339`]), white space around either ignored.
    ///
    /// ```
    /// use snowflake::UnixMillis;
    ///
    /// assert_eq!(UnixMillis::parse("from", " 1288834975657 ")?, UnixMillis(1288834975657));
    /// assert_eq!(UnixMillis::parse("from", "2010-11-04T01:42:55.657Z")?, UnixMillis(1288834975657));
    /// let err = UnixMillis::parse("from", "yesterday").unwrap_err();
    /// assert_eq!(err.field(), Some("from"));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse(field: &'static str, text: &str) -> Result<UnixMillis, Error> {
        let text = text.trim();
        text.parse::<i64>()
            .ok()
            .map(UnixMillis)
            .or_else(|| UnixMillis::parse_rfc3339(text))
            .ok_or_else(|| Error::invalid_time(field, text))
    }

    /// Reads a date as RFC 3339 writes one: `2010-11-04T01:42:55.657Z`, with
    /// `T`, `t` or a space between the date and the time, up to nine digits
    /// of a second's fraction (cut to whole milliseconds toward zero, as
    /// `jiff`'s `as_millisecond` cuts them), a leap second's `60` read as
    /// `59`, and `Z`, `z` or an offset such as `+01:00`. It also reads the
    /// expanded years that [`UnixMillis::to_rfc3339`] writes outside 0 to
    /// 9999, so that every date the core writes reads back. `None` for any
    /// other text, or a time past i64 milliseconds.
    ///
    /// ```
    /// use snowflake::UnixMillis;
    ///
    /// assert_eq!(UnixMillis::parse_rfc3339("2010-11-04T01:42:55.657Z"), Some(UnixMillis(1288834975657)));
    /// assert_eq!(UnixMillis::parse_rfc3339("2010-11-04 02:42:55.6579+01:00"), Some(UnixMillis(1288834975657)));
    /// assert_eq!(UnixMillis::parse_rfc3339("+292278994-08-17T07:12:55.807Z"), Some(UnixMillis(i64::MAX)));
    /// assert_eq!(UnixMillis::parse_rfc3339("2023-02-29T00:00:00Z"), None);
    /// assert_eq!(UnixMillis::parse_rfc3339("1288834975657"), None);
    /// ```
    pub fn parse_rfc3339(text: &str) -> Option<UnixMillis> {
        let mut rest = Reader(text.as_bytes());
        let year = rest.year()?;
        let month = rest.after(b"-", |r| r.number(2, 1, 12))?;
        let day = rest.after(b"-", |r| r.number(2, 1, days_in_month(year, month)))?;
        rest.one_of(b"Tt ")?;
        let hour = rest.number(2, 0, 23)?;
        let minute = rest.after(b":", |r| r.number(2, 0, 59))?;
        let second = rest.after(b":", |r| r.number(2, 0, 60))?.min(59);
        let nanos = rest.fraction()?;
        let offset_s = rest.offset()?;
        if !rest.0.is_empty() {
            return None;
        }
        let of_day = i64::from(hour * 3600 + minute * 60 + second);
        let seconds = days_from_civil(year, month, day)
            .checked_mul(MS_PER_DAY / 1000)?
            .checked_add(of_day - offset_s)?;
        // Toward zero: a negative time's fraction brings it nearer to zero,
        // so its part-millisecond counts as a whole one.
        let milli = if seconds < 0 {
            nanos.div_ceil(1_000_000)
        } else {
            nanos / 1_000_000
        };
        // In 128 bits: the earliest time's whole seconds alone are below
        // i64::MIN milliseconds.
        let ms = i128::from(seconds) * 1000 + i128::from(milli);
        i64::try_from(ms).ok().map(UnixMillis)
    }
}

/// What is left of a date being read.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// The year: four digits, or ISO 8601's expanded form as the writer
    /// writes it, a sign and six digits, more only without a leading zero
    /// (and not so many that the calendar's arithmetic could overflow);
    /// `-000000` is no year, as in RFC 9557.
    fn year(&mut self) -> Option<i64> {
        let sign = match self.0.first()? {
            b'+' => 1,
            b'-' => -1,
            _ => return self.number(4, 0, 9999).map(i64::from),
        };
        self.0 = &self.0[1..];
        let digits = self.digits(6..=10)?;
        let padded = digits.len() > 6 && digits[0] == b'0';
        let year = value(digits) as i64;
        if padded || (sign < 0 && year == 0) {
            return None;
        }
        Some(sign * year)
    }

    /// `width` digits, read as a number from `min` to `max`.
    fn number(&mut self, width: usize, min: u32, max: u32) -> Option<u32> {
        let n = value(self.digits(width..=width)?) as u32;
        (min..=max).contains(&n).then_some(n)
    }

    /// The digits in front, taken if there are as many as `widths` allows.
    fn digits(&mut self, widths: RangeInclusive<usize>) -> Option<&'a [u8]> {
        let width = self.0.iter().take_while(|b| b.is_ascii_digit()).count();
        if !widths.contains(&width) {
            return None;
        }
        let (digits, rest) = self.0.split_at(width);
        self.0 = rest;
        Some(digits)
    }

    /// `read` after the separator `sep`.
    fn after<T>(&mut self, sep: &[u8], read: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.0 = self.0.strip_prefix(sep)?;
        read(self)
    }

    /// One byte of `allowed`.
    fn one_of(&mut self, allowed: &[u8]) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        allowed.contains(&first).then(|| {
            self.0 = rest;
            first
        })
    }

    /// A second's fraction in nanoseconds: none, or a point and one to nine
    /// digits.
    fn fraction(&mut self) -> Option<u32> {
        let Some(rest) = self.0.strip_prefix(b".") else {
            return Some(0);
        };
        self.0 = rest;
        let digits = self.digits(1..=9)?;
        Some(value(digits) as u32 * 10u32.pow(9 - digits.len() as u32))
    }

    /// The offset from UTC in seconds: `Z`, `z`, or `+HH:MM` / `-HH:MM`.
    fn offset(&mut self) -> Option<i64> {
        let sign = match self.one_of(b"Zz+-")? {
            b'+' => 1,
            b'-' => -1,
            _ => return Some(0),
        };
        let hours = self.number(2, 0, 23)?;
        let minutes = self.after(b":", |r| r.number(2, 0, 59))?;
        Some(sign * i64::from(hours * 3600 + minutes * 60))
    }
}

/// ASCII digits as a number: at most ten of them, which a u64 holds.
fn value(digits: &[u8]) -> u64 {
    digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0'))
}

/// Days in `month` of `year`, in the proleptic Gregorian calendar.
fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_date_written_reads_back() {
        let mut samples = alloc::vec![
            i64::MIN,
            i64::MAX,
            0,
            -1,
            1,
            253402300799999,
            253402300800000
        ];
        // A spread over the whole range, and days around the epoch and the
        // leap days of four centuries.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            samples.push(x as i64);
            samples.push((x as i64) % 400_000_000_000_000);
        }
        samples.extend((-146_097..146_097).map(|day| day * MS_PER_DAY + 43_210_987));
        for ms in samples {
            let written = UnixMillis(ms).to_string();
            assert_eq!(
                UnixMillis::parse_rfc3339(&written),
                Some(UnixMillis(ms)),
                "{written}"
            );
        }
    }

    #[test]
    fn rfc3339_is_read_with_offsets_fractions_and_leap_seconds() {
        let read = |text: &str| UnixMillis::parse_rfc3339(text).map(|t| t.0);
        let base = 1288834975000; // 2010-11-04T01:42:55Z
        let cases = [
            ("2010-11-04T01:42:55Z", base),
            ("2010-11-04t01:42:55z", base),
            ("2010-11-04 01:42:55Z", base),
            ("2010-11-04T01:42:55.6Z", base + 600),
            ("2010-11-04T01:42:55.657999999Z", base + 657),
            ("2010-11-04T02:42:55+01:00", base),
            ("2010-11-03T20:12:55-05:30", base),
            ("2010-11-04T01:42:55-00:00", base),
            ("2016-12-31T23:59:60Z", 1483228799000),
            ("1969-12-31T23:59:59.9995Z", 0),
            ("1969-12-31T23:59:59.5Z", -500),
            ("1969-12-31T23:59:59.000001Z", -999),
            ("2000-02-29T00:00:00Z", 951782400000),
            ("0000-01-01T00:00:00Z", -62167219200000),
            ("9999-12-31T23:59:59.999Z", 253402300799999),
            ("+002010-11-04T01:42:55Z", base),
            ("+000000-01-01T00:00:00Z", -62167219200000),
        ];
        for (text, ms) in cases {
            assert_eq!(read(text), Some(ms), "{text}");
        }
        let refused = [
            "",
            "1288834975657",
            "2010-11-04",
            "2010-11-04T01:42Z",
            "2010-11-04T01:42:55",
            "2010-11-04T01:42:55.Z",
            "2010-11-04T01:42:55.1234567891Z",
            "2010-11-04T24:00:00Z",
            "2010-11-04T01:60:00Z",
            "2010-11-04T01:42:61Z",
            "2010-13-04T01:42:55Z",
            "2010-00-04T01:42:55Z",
            "2023-02-29T00:00:00Z",
            "2010-04-31T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2010-11-04T01:42:55+24:00",
            "2010-11-04T01:42:55+01",
            "2010-11-04T01:42:55+0100",
            "2010-11-04T01:42:55Z ",
            " 2010-11-04T01:42:55Z",
            "2010-11-04X01:42:55Z",
            "+2010-11-04T01:42:55Z",
            "+12345-01-01T00:00:00Z",
            "+0010000-01-01T00:00:00Z",
            "-000000-01-01T00:00:00Z",
            "+292278994-08-17T07:12:55.808Z",
            "-292275055-05-16T16:47:04.191Z",
            "+9999999999-01-01T00:00:00Z",
            "2010-1-04T01:42:55Z",
            "２０１０-11-04T01:42:55Z",
        ];
        for text in refused {
            assert_eq!(read(text), None, "{text:?}");
        }
    }
}

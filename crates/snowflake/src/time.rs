use core::fmt;

use crate::digits;

/// Milliseconds since the Unix epoch, displayed as an RFC 3339 UTC date with
/// milliseconds, e.g. `2010-11-04T01:42:55.657Z`.
///
/// The core writes and reads dates itself, without a dependency: its error
/// messages name limits as dates, and every front end, the WebAssembly module
/// without a date library among them, reads an RFC 3339 time alike
/// ([`UnixMillis::parse`], in `parse_time.rs`).
///
/// ```
/// use snowflake::UnixMillis;
///
/// assert_eq!(UnixMillis(1288834974657).to_string(), "2010-11-04T01:42:54.657Z");
/// assert_eq!(UnixMillis(0).to_string(), "1970-01-01T00:00:00.000Z");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixMillis(pub i64);

pub(crate) const MS_PER_DAY: i64 = 86_400_000;

impl UnixMillis {
    /// The longest date this writes: `+292278994-08-17T07:12:55.807Z`.
    pub const MAX_LEN: usize = 30;

    /// Writes the date into `buf` and returns it, without allocating; bulk
    /// output calls it once per ID, and `Display` is written through it.
    ///
    /// ```
    /// use snowflake::UnixMillis;
    ///
    /// let mut buf = [0u8; UnixMillis::MAX_LEN];
    /// assert_eq!(UnixMillis(1288834975657).to_rfc3339(&mut buf), "2010-11-04T01:42:55.657Z");
    /// ```
    pub fn to_rfc3339(self, buf: &mut [u8; UnixMillis::MAX_LEN]) -> &str {
        let len = self.write_front(buf);
        // Only ASCII digits and separators were written.
        core::str::from_utf8(&buf[..len]).unwrap_or("")
    }

    /// Appends the date to `out`, as [`UnixMillis::to_rfc3339`] writes it.
    ///
    /// ```
    /// let mut row = Vec::new();
    /// snowflake::UnixMillis(0).write_into(&mut row);
    /// assert_eq!(row, b"1970-01-01T00:00:00.000Z");
    /// ```
    pub fn write_into(self, out: &mut alloc::vec::Vec<u8>) {
        let mut buf = [0u8; UnixMillis::MAX_LEN];
        let len = self.write_front(&mut buf);
        out.extend_from_slice(&buf[..len]);
    }

    /// Writes the date at the start of `buf` and returns its length, for
    /// output assembled in place.
    ///
    /// ```
    /// use snowflake::UnixMillis;
    ///
    /// let mut buf = [0u8; UnixMillis::MAX_LEN];
    /// let len = UnixMillis(0).write_front(&mut buf);
    /// assert_eq!(&buf[..len], b"1970-01-01T00:00:00.000Z");
    /// ```
    pub fn write_front(self, buf: &mut [u8; UnixMillis::MAX_LEN]) -> usize {
        let days = self.0.div_euclid(MS_PER_DAY);
        // Below 86,400,000: the time of day is done in 32 bits.
        let ms_of_day = self.0.rem_euclid(MS_PER_DAY) as u32;
        let (year, month, day) = civil_from_days(days);
        // Years outside 0..=9999 have no room in RFC 3339; ISO 8601's
        // expanded form (a sign and at least six digits) takes them.
        let at = if (0..=9999).contains(&year) {
            buf[..4].copy_from_slice(&digits::four(year as u32));
            4
        } else {
            let width = (year.unsigned_abs().ilog10() as usize + 1).max(6);
            buf[0] = if year < 0 { b'-' } else { b'+' };
            // Room for any u64's digits, zero-filled for the leading zeros.
            const DIGITS: usize = 20;
            let mut wide = [b'0'; DIGITS];
            let start = digits::decimal_back(year.unsigned_abs(), &mut wide, DIGITS);
            let start = start.min(DIGITS - width);
            buf[1..=DIGITS - start].copy_from_slice(&wide[start..]);
            1 + DIGITS - start
        };
        let (hour, rest) = (ms_of_day / 3_600_000, ms_of_day % 3_600_000);
        let (minute, rest) = (rest / 60_000, rest % 60_000);
        let (second, milli) = (rest / 1000, rest % 1000);
        // "-MM-DDTHH:MM:SS.mmmZ"
        const TAIL: usize = 20;
        let tail = &mut buf[at..at + TAIL];
        tail[0] = b'-';
        tail[1..3].copy_from_slice(&digits::two(month));
        tail[3] = b'-';
        tail[4..6].copy_from_slice(&digits::two(day));
        tail[6] = b'T';
        tail[7..9].copy_from_slice(&digits::two(hour));
        tail[9] = b':';
        tail[10..12].copy_from_slice(&digits::two(minute));
        tail[12] = b':';
        tail[13..15].copy_from_slice(&digits::two(second));
        tail[15] = b'.';
        tail[16] = b'0' + (milli / 100) as u8;
        tail[17..19].copy_from_slice(&digits::two(milli % 100));
        tail[19] = b'Z';
        at + TAIL
    }
}

impl UnixMillis {
    /// The start (00:00 UTC) of the day this falls on: how the planner
    /// dates an epoch.
    ///
    /// ```
    /// use snowflake::UnixMillis;
    ///
    /// assert_eq!(UnixMillis(1288834974657).day_start(), UnixMillis(1288828800000));
    /// assert_eq!(UnixMillis(-1).day_start(), UnixMillis(-86_400_000));
    /// ```
    pub const fn day_start(self) -> UnixMillis {
        UnixMillis(self.0.div_euclid(MS_PER_DAY) * MS_PER_DAY)
    }

    /// The same time of day on the same date `years` later, in the proleptic
    /// Gregorian calendar (29 February becomes 1 March in a common year);
    /// `None` past i64 milliseconds. The planner ends a lifetime with it.
    ///
    /// ```
    /// use snowflake::UnixMillis;
    ///
    /// let leap_day = UnixMillis(1709208000000); // 2024-02-29T12:00:00Z
    /// assert_eq!(leap_day.years_later(1).unwrap().to_string(), "2025-03-01T12:00:00.000Z");
    /// assert_eq!(UnixMillis(i64::MAX - 1).years_later(1), None);
    /// ```
    pub fn years_later(self, years: u32) -> Option<UnixMillis> {
        let days = self.0.div_euclid(MS_PER_DAY);
        let ms_of_day = self.0.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let year = year.checked_add(i64::from(years))?;
        // Day 0 of a month is the last day of the one before, so an overflowing
        // day (29 February in a common year) rolls into the next month.
        let days = days_from_civil(year, month, 1) + i64::from(day) - 1;
        days.checked_mul(MS_PER_DAY)?
            .checked_add(ms_of_day)
            .map(UnixMillis)
    }
}

impl fmt::Display for UnixMillis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; UnixMillis::MAX_LEN];
        f.write_str(self.to_rfc3339(&mut buf))
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date, after Howard
/// Hinnant's `days_from_civil`: the inverse of [`civil_from_days`]. Exact
/// for every year a [`UnixMillis`] can reach, and some thousands beyond.
pub(crate) const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix milliseconds at 00:00 UTC of a proleptic Gregorian date, so that a
/// table can give a day as a date and not as a number.
pub(crate) const fn midnight_ms(year: i64, month: u32, day: u32) -> i64 {
    days_from_civil(year, month, day) * MS_PER_DAY
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), after
/// Howard Hinnant's `civil_from_days`, which is exact over the whole i64 range
/// of milliseconds.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn midnight_is_the_inverse_of_the_calendar() {
        assert_eq!(midnight_ms(1970, 1, 1), 0);
        assert_eq!(midnight_ms(2015, 1, 1), 1420070400000);
        assert_eq!(midnight_ms(2000, 2, 29), 951782400000);
        assert_eq!(midnight_ms(1969, 12, 31), -MS_PER_DAY);
        // Every day of four centuries around the epoch, leap days included.
        for days in -73_049..73_049 {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(
                midnight_ms(year, month, day),
                days * MS_PER_DAY,
                "{year}-{month}-{day}"
            );
        }
    }

    #[test]
    fn years_later_is_the_same_date_and_time() {
        let at = |text: &str| -> i64 {
            // Found by search, so that the test does not trust the inverse it
            // tests; within years 0000 to 9999 the text sorts as the time does.
            let (mut lo, mut hi) = (-62167219200000, 253402300799999);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if UnixMillis(mid).to_string().as_str() < text {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let cases = [
            ("2016-05-20T00:00:00.000Z", 10, "2026-05-20T00:00:00.000Z"),
            ("2010-11-04T01:42:54.657Z", 69, "2079-11-04T01:42:54.657Z"),
            ("2024-02-29T12:00:00.000Z", 1, "2025-03-01T12:00:00.000Z"),
            ("2024-02-29T12:00:00.000Z", 4, "2028-02-29T12:00:00.000Z"),
            ("1999-12-31T23:59:59.999Z", 1, "2000-12-31T23:59:59.999Z"),
            ("1969-03-01T00:00:00.000Z", 1000, "2969-03-01T00:00:00.000Z"),
        ];
        for (from, years, to) in cases {
            let ms = at(from);
            assert_eq!(UnixMillis(ms).to_string(), from);
            let later = UnixMillis(ms).years_later(years).unwrap();
            assert_eq!(later.to_string(), to, "{from} + {years}");
        }
        assert_eq!(UnixMillis(i64::MAX - 1).years_later(1), None);
        assert_eq!(UnixMillis(1288834974657).day_start().0, 1288828800000);
        assert_eq!(UnixMillis(-1).day_start().0, -86_400_000);
    }

    #[test]
    fn known_dates() {
        assert_eq!(
            UnixMillis(3487858230208).to_string(),
            "2080-07-10T17:30:30.208Z"
        );
        assert_eq!(
            UnixMillis(1409529600000).to_string(),
            "2014-09-01T00:00:00.000Z"
        );
        assert_eq!(UnixMillis(-1).to_string(), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            UnixMillis(951782400000).to_string(),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            UnixMillis(i64::MAX).to_string(),
            "+292278994-08-17T07:12:55.807Z"
        );
        assert_eq!(
            UnixMillis(i64::MIN).to_string(),
            "-292275055-05-16T16:47:04.192Z"
        );
        // The first years past RFC 3339's four digits, on either side.
        assert_eq!(
            UnixMillis(253402300800000).to_string(),
            "+010000-01-01T00:00:00.000Z"
        );
        assert_eq!(
            UnixMillis(-62198755200000).to_string(),
            "-000001-01-01T00:00:00.000Z"
        );
    }
}

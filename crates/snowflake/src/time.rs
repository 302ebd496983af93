use core::fmt;

/// Milliseconds since the Unix epoch, displayed as an RFC 3339 UTC date with
/// milliseconds, e.g. `2010-11-04T01:42:55.657Z`.
///
/// The core formats dates itself so that its error messages can name a limit
/// as a date without a dependency; parsing dates is left to the front ends.
///
/// ```
/// use snowflake::UnixMillis;
///
/// assert_eq!(UnixMillis(1288834974657).to_string(), "2010-11-04T01:42:54.657Z");
/// assert_eq!(UnixMillis(0).to_string(), "1970-01-01T00:00:00.000Z");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixMillis(pub i64);

const MS_PER_DAY: i64 = 86_400_000;

impl fmt::Display for UnixMillis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(MS_PER_DAY);
        let ms_of_day = self.0.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let (hour, rest) = (ms_of_day / 3_600_000, ms_of_day % 3_600_000);
        let (minute, rest) = (rest / 60_000, rest % 60_000);
        let (second, milli) = (rest / 1000, rest % 1000);
        if (0..=9999).contains(&year) {
            write!(f, "{year:04}")?;
        } else {
            // RFC 3339 has no room for these; ISO 8601's expanded form does.
            write!(f, "{year:+07}")?;
        }
        write!(
            f,
            "-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z"
        )
    }
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
    }
}

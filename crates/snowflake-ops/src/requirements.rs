//! What a deployment asks of a layout: a peak rate per node, a number of
//! nodes and a lifetime from a start date, at a tick and in a width. The
//! planner proposes a layout for them ([`Requirements::plan`]) and judges an
//! existing one against them ([`Requirements::check`]).

use snowflake::UnixMillis;

use crate::error::Error;

/// What a deployment needs of its IDs; see [`Requirements::new`].
///
/// ```
/// use snowflake_ops::Requirements;
///
/// // 10,000 IDs a second per node, 64 nodes, 20 years from 2025-01-01.
/// let needs = Requirements::new(10_000, 64, 20, 1735689600000)?.with_tick_ms(10)?;
/// assert_eq!((needs.rate_per_sec(), needs.nodes(), needs.years()), (10_000, 64, 20));
/// assert_eq!(needs.width(), 63);
/// assert_eq!(snowflake::UnixMillis(needs.until_ms()).to_string(), "2045-01-01T00:00:00.000Z");
/// # Ok::<(), snowflake_ops::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requirements {
    rate_per_sec: u64,
    nodes: u64,
    years: u32,
    from_ms: i64,
    until_ms: i64,
    tick_ms: u64,
    js_safe: bool,
}

impl Requirements {
    /// The longest lifetime a plan is made for, in years.
    ///
    /// ```
    /// assert!(snowflake_ops::Requirements::new(1, 1, snowflake_ops::Requirements::MAX_YEARS + 1, 0).is_err());
    /// ```
    pub const MAX_YEARS: u32 = 1000;

    /// The coarsest tick a plan is made for: a day.
    ///
    /// ```
    /// assert_eq!(snowflake_ops::Requirements::MAX_TICK_MS, 86_400_000);
    /// ```
    pub const MAX_TICK_MS: u64 = 86_400_000;

    /// The earliest start: 0001-01-01T00:00:00Z.
    const FIRST_FROM_MS: i64 = -62_135_596_800_000;
    /// The latest start: 9999-12-31T23:59:59.999Z.
    const LAST_FROM_MS: i64 = 253_402_300_799_999;

    /// A peak of `rate_per_sec` IDs a second on each of `nodes` nodes, for
    /// `years` years from `from_ms` (Unix milliseconds; the caller reads its
    /// clock, so that tests can fix "today"), with 1 ms ticks in 63 bits.
    ///
    /// ```
    /// use snowflake_ops::Requirements;
    ///
    /// let err = Requirements::new(0, 4, 10, 0).unwrap_err();
    /// assert_eq!(err.to_string(), "rate 0 is not allowed; a peak rate is at least 1 ID a second");
    /// assert_eq!(err.field(), "rate");
    /// # Ok::<(), snowflake_ops::Error>(())
    /// ```
    pub fn new(
        rate_per_sec: u64,
        nodes: u64,
        years: u32,
        from_ms: i64,
    ) -> Result<Requirements, Error> {
        if rate_per_sec == 0 {
            return Err(Error::invalid(
                "rate",
                "0",
                "a peak rate is at least 1 ID a second",
            ));
        }
        if nodes == 0 {
            return Err(Error::invalid(
                "nodes",
                "0",
                "a plan is for at least 1 node",
            ));
        }
        if !(1..=Requirements::MAX_YEARS).contains(&years) {
            return Err(Error::invalid(
                "years",
                &alloc::format!("{years}"),
                "a lifetime is 1 to 1000 years",
            ));
        }
        if !(Requirements::FIRST_FROM_MS..=Requirements::LAST_FROM_MS).contains(&from_ms) {
            return Err(Error::invalid(
                "from",
                &alloc::format!("{} ({from_ms})", UnixMillis(from_ms)),
                "a plan starts in the years 0001 to 9999",
            ));
        }
        // Within those years and 1,000 more, the sum fits easily.
        let until_ms = UnixMillis(from_ms)
            .years_later(years)
            .map(|t| t.0)
            .ok_or_else(|| {
                Error::invalid(
                    "from",
                    &alloc::format!("{from_ms}"),
                    "the lifetime ends past i64 milliseconds",
                )
            })?;
        Ok(Requirements {
            rate_per_sec,
            nodes,
            years,
            from_ms,
            until_ms,
            tick_ms: 1,
            js_safe: false,
        })
    }

    /// These requirements at another tick (milliseconds per time unit, 1 to
    /// [`Requirements::MAX_TICK_MS`]): a coarser tick makes the time field last
    /// longer in the same bits, and puts more IDs in each unit.
    ///
    /// ```
    /// let needs = snowflake_ops::Requirements::new(1, 1, 1, 0)?;
    /// assert_eq!(needs.with_tick_ms(1000)?.tick_ms(), 1000);
    /// let err = needs.with_tick_ms(0).unwrap_err();
    /// assert_eq!(err.to_string(), "tick_ms 0 is not allowed; a tick is 1 to 86400000 ms (a day)");
    /// # Ok::<(), snowflake_ops::Error>(())
    /// ```
    pub fn with_tick_ms(mut self, tick_ms: u64) -> Result<Requirements, Error> {
        if !(1..=Requirements::MAX_TICK_MS).contains(&tick_ms) {
            return Err(Error::invalid(
                "tick_ms",
                &alloc::format!("{tick_ms}"),
                "a tick is 1 to 86400000 ms (a day)",
            ));
        }
        self.tick_ms = tick_ms;
        Ok(self)
    }

    /// These requirements with IDs that JavaScript holds exactly as numbers (53
    /// bits, [`Layout::JS_MAX_SAFE`](snowflake::Layout::JS_MAX_SAFE)) or not (63 bits).
    ///
    /// ```
    /// let needs = snowflake_ops::Requirements::new(1, 1, 1, 0)?.with_js_safe(true);
    /// assert_eq!(needs.width(), 53);
    /// # Ok::<(), snowflake_ops::Error>(())
    /// ```
    pub const fn with_js_safe(mut self, js_safe: bool) -> Requirements {
        self.js_safe = js_safe;
        self
    }

    /// The peak rate, IDs a second per node.
    pub const fn rate_per_sec(&self) -> u64 {
        self.rate_per_sec
    }

    /// How many nodes issue IDs at once.
    pub const fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The lifetime asked for, in years from [`Requirements::from_ms`].
    pub const fn years(&self) -> u32 {
        self.years
    }

    /// The start of the lifetime, Unix milliseconds.
    pub const fn from_ms(&self) -> i64 {
        self.from_ms
    }

    /// The end of the lifetime: the same date and time of day
    /// [`Requirements::years`] later.
    pub const fn until_ms(&self) -> i64 {
        self.until_ms
    }

    /// Milliseconds per time unit of a proposed layout.
    pub const fn tick_ms(&self) -> u64 {
        self.tick_ms
    }

    /// Whether IDs must stay within 53 bits.
    pub const fn js_safe(&self) -> bool {
        self.js_safe
    }

    /// The bits a layout may use: 63 (the 64th is the sign, kept 0 so IDs
    /// are positive as signed integers), or 53 when JavaScript-safe.
    ///
    /// ```
    /// assert_eq!(snowflake_ops::Requirements::new(1, 1, 1, 0)?.width(), 63);
    /// # Ok::<(), snowflake_ops::Error>(())
    /// ```
    pub const fn width(&self) -> u8 {
        if self.js_safe { 53 } else { 63 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_bad_need_names_its_field() {
        let cases = [
            (
                Requirements::new(0, 1, 1, 0),
                "rate",
                "rate 0 is not allowed",
            ),
            (
                Requirements::new(1, 0, 1, 0),
                "nodes",
                "nodes 0 is not allowed",
            ),
            (
                Requirements::new(1, 1, 0, 0),
                "years",
                "a lifetime is 1 to 1000 years",
            ),
            (
                Requirements::new(1, 1, 1001, 0),
                "years",
                "years 1001 is not allowed",
            ),
            (
                Requirements::new(1, 1, 1, i64::MAX),
                "from",
                "a plan starts in the years 0001 to 9999",
            ),
            (
                Requirements::new(1, 1, 1, Requirements::FIRST_FROM_MS - 1),
                "from",
                "0000-12-31T23:59:59.999Z",
            ),
            (
                Requirements::new(1, 1, 1, 0)
                    .and_then(|n| n.with_tick_ms(Requirements::MAX_TICK_MS + 1)),
                "tick_ms",
                "tick_ms 86400001 is not allowed",
            ),
        ];
        for (result, field, text) in cases {
            let err = result.unwrap_err();
            assert_eq!(err.field(), field, "{err}");
            assert!(err.to_string().contains(text), "{err}");
        }
        let edges = [
            Requirements::new(
                u64::MAX,
                u64::MAX,
                Requirements::MAX_YEARS,
                Requirements::LAST_FROM_MS,
            ),
            Requirements::new(1, 1, 1, Requirements::FIRST_FROM_MS),
        ];
        for needs in edges {
            assert!(needs.is_ok(), "{needs:?}");
        }
    }
}

//! Partitions by ID range: a table partitioned on its Snowflake IDs holds a
//! period of time in each partition, because an ID's time is its top bits.
//! The bounds are the first ID of each period, worked out here once, so the
//! statements hold numbers and need no function installed.
//!
//! Periods begin at midnight in a time zone (jiff does the calendar: a day
//! of 23 or 25 hours where summer time begins or ends, a midnight that a
//! zone skips), are whole days, weeks from Monday or calendar months, and
//! cover `from` to `to` both included.

use jiff::ToSpan;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use snowflake::{Layout, UnixMillis};

use super::Period;
use super::database::{Database, Partition, Table};
use super::layout::MAX_NAME;
use crate::usage::UsageError;

/// What to partition, and by which periods.
#[derive(Debug)]
pub struct Periods<'a> {
    pub table: &'a str,
    pub from: Date,
    pub to: Date,
    pub every: Period,
    pub zone: &'a TimeZone,
}

/// One period: its first day, when it begins, and the first ID of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub day: Date,
    pub start_ms: i64,
    pub id: i64,
}

impl Bound {
    /// Its day and when the period begins, for a comment.
    fn label(&self) -> String {
        format!("{} ({})", self.day, UnixMillis(self.start_ms))
    }
}

impl Period {
    /// The first day of the period that `day` falls in.
    fn first_day(self, day: Date) -> Date {
        match self {
            Period::Day => day,
            Period::Week => {
                let back = i64::from(day.weekday().to_monday_zero_offset());
                day.checked_sub(back.days()).unwrap_or(day)
            }
            Period::Month => day.first_of_month(),
        }
    }

    /// The first day of the next period, for a period's first day.
    fn next(self, first: Date) -> Result<Date, jiff::Error> {
        match self {
            Period::Day => first.checked_add(1.day()),
            Period::Week => first.checked_add(1.week()),
            Period::Month => first.checked_add(1.month()),
        }
    }

    /// The suffix of a partition's name: its first day.
    fn suffix(self, first: Date) -> String {
        match self {
            Period::Day | Period::Week => first.strftime("%Y%m%d").to_string(),
            Period::Month => first.strftime("%Y%m").to_string(),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Period::Day => "one a day",
            Period::Week => "one a week, Monday to Sunday",
            Period::Month => "one a calendar month",
        }
    }
}

/// The period starts from `from`'s period to `to`'s, and the start of the
/// period after `to`'s: one bound more than there are periods.
pub fn bounds(layout: &Layout, p: &Periods) -> Result<Vec<Bound>, UsageError> {
    if p.from > p.to {
        return Err(UsageError::new(
            "from",
            &format!("{} (after --to {})", p.from, p.to),
            "--from is the first day partitioned, on or before --to",
        ));
    }
    let mut days = vec![p.every.first_day(p.from)];
    loop {
        let last = *days.last().expect("one day at least");
        let next = p.every.next(last).map_err(|_| out_of_range("to", p.to))?;
        days.push(next);
        if next > p.to {
            break;
        }
    }
    days.into_iter()
        .enumerate()
        .map(|(i, day)| {
            let start_ms = day
                .to_zoned_datetime(p.zone.clone())
                .map_err(|_| out_of_range("to", p.to))?
                .timestamp()
                .as_millisecond();
            let field = if i == 0 { "from" } else { "to" };
            Ok(Bound {
                day,
                start_ms,
                id: first_id(layout, start_ms, field, if i == 0 { p.from } else { p.to })?,
            })
        })
        .collect()
}

fn out_of_range(field: &'static str, day: Date) -> UsageError {
    UsageError::new(
        field,
        &day.to_string(),
        "the periods must lie within the years -9999 to 9999",
    )
}

/// The first ID whose time is at or after `ms`: the smallest ID of the first
/// tick that begins then or later (an ID's time is its tick's start).
fn first_id(layout: &Layout, ms: i64, field: &'static str, day: Date) -> Result<i64, UsageError> {
    let refuse = |allowed| UsageError::new(field, &day.to_string(), allowed);
    if ms < layout.epoch_ms() {
        return Err(refuse(
            "the periods must begin at or after the layout's epoch (snowflake layouts shows it)",
        ));
    }
    let mut units = layout.time_units(ms).map_err(|_| {
        refuse("the periods must end before the layout's last time (snowflake layouts shows it)")
    })?;
    if layout.timestamp_ms(units) < ms {
        units += 1;
    }
    let id = layout
        .compose(layout.timestamp_ms(units), &[])
        .map_err(|_| {
            refuse(
                "the periods must end before the layout's last time (snowflake layouts shows it)",
            )
        })?
        .get();
    // bigint is signed: IDs from 2^63 on are negative there, and sort below
    // every earlier ID, so a range cannot run across that point.
    i64::try_from(id).map_err(|_| {
        refuse(
            "partitions by ID range must end before the layout's IDs pass 2^63 and turn \
             negative in bigint (for discord, instagram and mastodon: see snowflake sql's comment)",
        )
    })
}

/// The statements that partition `p.table`.
pub fn render(layout: &Layout, db: &dyn Database, p: &Periods) -> Result<String, UsageError> {
    let (schema, name) = check_table(p.table)?;
    let bounds = bounds(layout, p)?;
    check_count(db, bounds.len() - 1)?;
    let partitions: Vec<Partition> = bounds
        .windows(2)
        .map(|pair| Partition {
            suffix: p.every.suffix(pair[0].day),
            from: pair[0].id,
            to: pair[1].id,
            label: pair[0].label(),
        })
        .collect();
    let table = Table {
        written: p.table,
        schema,
        name,
    };
    Ok(header(layout, p, &bounds) + &db.partitions(&table, &partitions))
}

/// The periods need no more partitions than the database allows a table,
/// one more where the first holds the IDs before them.
fn check_count(db: &dyn Database, periods: usize) -> Result<(), UsageError> {
    let can = db.capabilities();
    let Some(max) = can.max_partitions else {
        return Ok(());
    };
    let (partitions, for_before) = match can.bounded_partitions {
        true => (periods, ""),
        false => (periods + 1, ", one of them for IDs before --from"),
    };
    if partitions <= max {
        return Ok(());
    }
    Err(UsageError::new(
        "partitions",
        &format!("of {periods} periods"),
        format!(
            "{} allow {max} partitions a table{for_before}; \
             choose a longer --every or fewer days",
            can.name
        ),
    ))
}

/// What is partitioned, how, and from when to when.
fn header(layout: &Layout, p: &Periods, bounds: &[Bound]) -> String {
    let (first, end) = (&bounds[0], &bounds[bounds.len() - 1]);
    format!(
        "-- Partitions of {table} by ID range, made by `snowflake sql --partitions`:\n\
         -- {noun}, {periods} in all, from midnight {from} to midnight {end} in {zone}\n\
         -- ({from_utc} to {end_utc}).\n\
         -- IDs of layout {layout} ({spec}).\n\
         -- Each bound is the first ID whose time is at or after the start of its period.\n",
        table = p.table,
        noun = p.every.noun(),
        periods = bounds.len() - 1,
        from = first.day,
        end = end.day,
        zone = p.zone.iana_name().unwrap_or("UTC"),
        from_utc = UnixMillis(first.start_ms),
        end_utc = UnixMillis(end.start_ms),
        layout = layout.name(),
        spec = layout.spec(),
    )
}

/// `table` or `schema.table`, each a plain identifier, short enough that
/// its partitions' names fit; the schema (with its dot) and the name.
fn check_table(table: &str) -> Result<(&str, &str), UsageError> {
    let plain = |part: &str| {
        (1..=MAX_NAME).contains(&part.len())
            && part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let (schema, name) = match table.rsplit_once('.') {
        Some((schema, name)) => (&table[..=schema.len()], name),
        None => ("", table),
    };
    let suffix = "_p20250101".len();
    if plain(name) && (schema.is_empty() || plain(&schema[..schema.len() - 1])) {
        if name.len() + suffix <= MAX_NAME {
            return Ok((schema, name));
        }
        return Err(UsageError::new(
            "partitions",
            &format!("{table:?}"),
            "the table's name is at most 53 characters, so that its partitions' names \
             (name_p20250101) fit in 63",
        ));
    }
    Err(UsageError::new(
        "partitions",
        &format!("{table:?}"),
        "the table is written table or schema.table, each letters, digits and _, \
         starting with a letter or _",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::Dialect;
    use jiff::civil::date;

    fn periods<'a>(from: Date, to: Date, every: Period, zone: &'a TimeZone) -> Periods<'a> {
        Periods {
            table: "posts",
            from,
            to,
            every,
            zone,
        }
    }

    fn ms(text: &str) -> i64 {
        text.parse::<jiff::Timestamp>().unwrap().as_millisecond()
    }

    /// The bounds of `layout`'s periods from `from` to `to` in `zone`.
    fn bounds_in(
        zone: &str,
        layout: &Layout,
        (from, to): (&str, &str),
        every: Period,
    ) -> Result<Vec<Bound>, UsageError> {
        let zone = TimeZone::get(zone).unwrap();
        let (from, to) = (from.parse().unwrap(), to.parse().unwrap());
        bounds(layout, &periods(from, to, every, &zone))
    }

    fn days(bounds: &[Bound]) -> Vec<String> {
        bounds.iter().map(|b| b.day.to_string()).collect()
    }

    #[test]
    fn days_in_utc_begin_at_midnight_and_the_last_bound_follows_to() {
        let twitter = Layout::twitter();
        let b = bounds_in("UTC", &twitter, ("2025-01-30", "2025-02-01"), Period::Day).unwrap();
        let expected = ["2025-01-30", "2025-01-31", "2025-02-01", "2025-02-02"];
        assert_eq!(days(&b), expected);
        assert_eq!(b[0].start_ms, ms("2025-01-30T00:00:00Z"));
        assert_eq!(b[3].start_ms, ms("2025-02-02T00:00:00Z"));
        for bound in &b {
            let id = twitter.compose(bound.start_ms, &[]).unwrap().get();
            assert_eq!(bound.id as u64, id, "{bound:?}");
        }
    }

    #[test]
    fn a_day_is_23_or_25_hours_where_summer_time_begins_or_ends() {
        let ny = "America/New_York";
        let twitter = Layout::twitter();
        let b = bounds_in(ny, &twitter, ("2025-03-08", "2025-03-09"), Period::Day).unwrap();
        let starts: Vec<_> = b.iter().map(|b| b.start_ms).collect();
        let expected = [
            "2025-03-08T05:00:00Z",
            "2025-03-09T05:00:00Z",
            "2025-03-10T04:00:00Z",
        ];
        assert_eq!(starts, expected.map(ms));
        let b = bounds_in(ny, &twitter, ("2025-11-02", "2025-11-02"), Period::Day).unwrap();
        assert_eq!(b[1].start_ms - b[0].start_ms, 25 * 3_600_000);
    }

    #[test]
    fn a_midnight_the_zone_skips_begins_the_day_at_the_first_hour() {
        // Santiago moved its clocks from 00:00 to 01:00 on 2022-09-11.
        let santiago = "America/Santiago";
        let day = ("2022-09-11", "2022-09-11");
        let b = bounds_in(santiago, &Layout::twitter(), day, Period::Day).unwrap();
        assert_eq!(b[0].start_ms, ms("2022-09-11T04:00:00Z"));
        assert_eq!(b[1].start_ms, ms("2022-09-12T03:00:00Z"));
    }

    #[test]
    fn weeks_begin_on_monday_and_months_on_the_first() {
        let days_of =
            |range, every| days(&bounds_in("UTC", &Layout::twitter(), range, every).unwrap());
        // 2025-01-01 is a Wednesday; its week began on 2024-12-30.
        assert_eq!(
            days_of(("2025-01-01", "2025-01-13"), Period::Week),
            ["2024-12-30", "2025-01-06", "2025-01-13", "2025-01-20"]
        );
        assert_eq!(
            days_of(("2024-01-31", "2024-03-01"), Period::Month),
            ["2024-01-01", "2024-02-01", "2024-03-01", "2024-04-01"]
        );
    }

    #[test]
    fn a_bound_inside_a_tick_moves_to_the_next_tick() {
        // Ticks of 10 ms from an epoch 3 ms past a second: midnight falls
        // 7 ms into a tick, whose IDs carry a time before midnight; the
        // day's first tick begins 3 ms after it.
        let epoch = ms("2020-01-01T00:00:00.003Z");
        let layout = Layout::sonyflake()
            .with_epoch_ms(epoch)
            .unwrap()
            .with_tick_ms(10)
            .unwrap();
        let b = bounds_in("UTC", &layout, ("2025-01-01", "2025-01-01"), Period::Day).unwrap();
        let first = layout.decode(snowflake::Id::new(b[0].id as u64)).unwrap();
        assert_eq!(first.timestamp_ms(), ms("2025-01-01T00:00:00.003Z"));
        let before = layout
            .compose(ms("2025-01-01T00:00:00Z") - 1, &[])
            .unwrap()
            .get();
        assert!((before as i64) < b[0].id);
    }

    #[test]
    fn periods_out_of_order_or_outside_the_layout_are_refused() {
        let (twitter, discord) = (Layout::twitter(), Layout::discord());
        // The layout, the days, the field refused and words of the refusal.
        let cases = [
            (
                &twitter,
                ("2025-02-01", "2025-01-01"),
                "from",
                "2025-02-01 (after --to 2025-01-01)",
            ),
            (&twitter, ("2009-01-01", "2025-01-01"), "from", "epoch"),
            (&twitter, ("2080-07-01", "2080-07-10"), "to", "last time"),
            // Discord's IDs pass 2^63 in September 2084.
            (&discord, ("2084-09-01", "2084-09-30"), "to", "2^63"),
        ];
        for (layout, days, field, words) in cases {
            let err = bounds_in("UTC", layout, days, Period::Day).unwrap_err();
            assert_eq!(err.field(), field, "{err}");
            assert!(err.to_string().contains(words), "{err}");
        }
        assert!(bounds_in("UTC", &discord, ("2084-09-01", "2084-09-05"), Period::Day).is_ok());
    }

    #[test]
    fn table_names_are_plain_identifiers() {
        for good in ["posts", "app.posts", "_x", "Posts2", &"p".repeat(53)] {
            assert!(check_table(good).is_ok(), "{good}");
        }
        assert_eq!(check_table("app.posts").unwrap(), ("app.", "posts"));
        for bad in [
            "",
            "1posts",
            "posts;drop",
            "a.b.c",
            "a.",
            ".a",
            "pö",
            &"p".repeat(54),
        ] {
            let err = check_table(bad).unwrap_err();
            assert_eq!(err.field(), "partitions", "{bad}");
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn statements_hold_the_bounds() {
        let utc = TimeZone::UTC;
        let p = periods(date(2025, 1, 1), date(2025, 2, 28), Period::Month, &utc);
        let twitter = Layout::twitter();
        let b = bounds(&twitter, &p).unwrap();
        let pg = render(&twitter, Dialect::Postgres.database(), &p).unwrap();
        assert!(pg.contains(&format!(
            "CREATE TABLE IF NOT EXISTS posts_p202501 PARTITION OF posts\n  FOR VALUES FROM ({}) TO ({});",
            b[0].id, b[1].id
        )));
        assert_eq!(pg.matches("PARTITION OF posts\n").count(), 2);
        let my = render(&twitter, Dialect::Mysql.database(), &p).unwrap();
        assert!(my.contains(&format!(
            "  PARTITION p_before VALUES LESS THAN ({}),",
            b[0].id
        )));
        assert!(my.contains(&format!(
            "  PARTITION p202502 VALUES LESS THAN ({})  --",
            b[2].id
        )));
        assert!(my.trim_end().ends_with(");"));
    }

    #[test]
    fn mysql_takes_at_most_8192_partitions() {
        let utc = TimeZone::UTC;
        let fits = periods(date(2001, 1, 1), date(2023, 5, 5), Period::Day, &utc);
        let layout = Layout::twitter().with_epoch_ms(0).unwrap();
        let periods_fitting = bounds(&layout, &fits).unwrap().len() - 1;
        assert_eq!(periods_fitting, 8_160);
        assert!(render(&layout, Dialect::Mysql.database(), &fits).is_ok());
        let over = Periods {
            to: date(2023, 6, 30),
            ..fits
        };
        let err = render(&layout, Dialect::Mysql.database(), &over).unwrap_err();
        assert_eq!(err.field(), "partitions");
        assert!(err.to_string().contains("8192"), "{err}");
        assert!(render(&layout, Dialect::Postgres.database(), &over).is_ok());
    }
}

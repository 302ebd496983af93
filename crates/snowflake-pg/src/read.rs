//! The read functions: the core's decode, compose, bounds and text forms,
//! `IMMUTABLE STRICT PARALLEL SAFE`, so that indexes, generated columns
//! and partition bounds can use them. The layout is an argument, as
//! `snowflake.layout` takes it, never the setting: a function that read a
//! setting would not be immutable.

use std::cell::RefCell;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::{JsonB, PgSqlErrorCode, pg_extern};
use snowflake::{Error, Id, Layout, TextForm};

use crate::pairs;
use crate::report::{OrFail, fail_with};

/// Unix milliseconds of PostgreSQL's epoch, 2000-01-01T00:00:00Z.
const PG_EPOCH_MS: i64 = 946_684_800_000;

/// The time an ID carries.
#[pg_extern(immutable, strict, parallel_safe, name = "time")]
fn id_time(id: i64, layout: &str) -> TimestampWithTimeZone {
    let ms = with_layout(layout, |l| Ok(l.decode(Id::new(id as u64))?.timestamp_ms())).or_fail();
    timestamp(ms)
}

/// One field of an ID: `timestamp` (its time units), a node field or the
/// sequence.
#[pg_extern(immutable, strict, parallel_safe)]
fn field(id: i64, name: &str, layout: &str) -> i64 {
    with_layout(layout, |l| {
        let decoded = l.decode(Id::new(id as u64))?;
        if name == Layout::TIME_FIELD {
            return Ok(decoded.time_units() as i64);
        }
        decoded.field(name).map(|v| v as i64).ok_or_else(|| {
            Error::invalid_value("field", name, "a field of the layout, or timestamp")
        })
    })
    .or_fail()
}

/// An ID's breakdown, in the JSON shape of `snowflake decode --json` and
/// the HTTP API.
#[pg_extern(immutable, strict, parallel_safe)]
fn decode(id: i64, layout: &str) -> JsonB {
    let json = with_layout(layout, |l| {
        Ok(serde_json::to_value(l.decode(Id::new(id as u64))?))
    });
    match json.or_fail() {
        Ok(value) => JsonB(value),
        Err(err) => fail_with(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, &err.to_string()),
    }
}

/// The ID of a time and field values (`'datacenter=1,machine=7'`; fields
/// left out are 0).
#[pg_extern(immutable, strict, parallel_safe)]
fn compose(ts: TimestampWithTimeZone, fields: &str, layout: &str) -> i64 {
    let ms = unix_ms(ts);
    with_layout(layout, |l| {
        let values = pairs::parse(l, fields)?;
        Ok(l.compose(ms, &values)?.get() as i64)
    })
    .or_fail()
}

/// The smallest ID of the tick `ts` falls in: `WHERE id BETWEEN
/// snowflake.min_id(a, l) AND snowflake.max_id(b, l)`.
#[pg_extern(immutable, strict, parallel_safe)]
fn min_id(ts: TimestampWithTimeZone, layout: &str) -> i64 {
    let ms = unix_ms(ts);
    with_layout(layout, |l| Ok(l.bounds(ms, ms)?.first().get() as i64)).or_fail()
}

/// The largest ID of the tick `ts` falls in.
#[pg_extern(immutable, strict, parallel_safe)]
fn max_id(ts: TimestampWithTimeZone, layout: &str) -> i64 {
    let ms = unix_ms(ts);
    with_layout(layout, |l| Ok(l.bounds(ms, ms)?.last().get() as i64)).or_fail()
}

/// An ID in a text form (`decimal`, `hex`, `base32`, …).
#[pg_extern(immutable, strict, parallel_safe)]
fn to_text(id: i64, form: &str) -> String {
    let form: TextForm = form.parse().or_fail();
    Id::new(id as u64).to_text(form)
}

/// The ID a text form spells.
#[pg_extern(immutable, strict, parallel_safe)]
fn from_text(text: &str, form: &str) -> i64 {
    let form: TextForm = form.parse().or_fail();
    form.parse(text).or_fail().get() as i64
}

/// Runs `f` on the layout `text` names, parsed once per backend for as
/// long as the same text keeps coming: a query over many rows names one.
fn with_layout<R>(text: &str, f: impl FnOnce(&Layout) -> Result<R, Error>) -> Result<R, Error> {
    thread_local! {
        static LAST: RefCell<Option<(String, Layout)>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.as_ref().is_none_or(|(seen, _)| seen != text) {
            *last = Some((text.to_owned(), Layout::parse(text)?));
        }
        let (_, layout) = last.as_ref().expect("set above");
        f(layout)
    })
}

/// A timestamptz as Unix milliseconds, floored.
fn unix_ms(ts: TimestampWithTimeZone) -> i64 {
    if ts.is_infinity() || ts.is_neg_infinity() {
        fail_with(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "ts is infinite: an ID carries a finite time",
        );
    }
    let micros: i64 = ts.into();
    micros.div_euclid(1000) + PG_EPOCH_MS
}

/// Unix milliseconds as a timestamptz.
fn timestamp(ms: i64) -> TimestampWithTimeZone {
    (ms - PG_EPOCH_MS)
        .checked_mul(1000)
        .and_then(|micros| TimestampWithTimeZone::try_from(micros).ok())
        .unwrap_or_else(|| {
            fail_with(
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
                &format!("the ID's time {ms} (Unix ms) is outside timestamptz's range"),
            )
        })
}

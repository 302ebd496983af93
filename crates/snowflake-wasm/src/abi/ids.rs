//! IDs: decoded, composed, read under every preset, bounded by a window.

use snowflake::{Id, Readings};

use super::{field_values, with_layout};
use crate::registry::{LAYOUTS, PRESETS};
use crate::reply::{self, DONE};

/// Decodes `id`: the numbers are its Unix milliseconds (as `i64` bits), its
/// time units, then each field's value, most significant first; the doubles
/// hold the same.
#[unsafe(no_mangle)]
pub extern "C" fn sf_decode(layout: i32, id: i64) -> i32 {
    with_layout(layout, |layout| match layout.decode(Id::new(id as u64)) {
        Ok(decoded) => {
            let ms = decoded.timestamp_ms();
            let units = decoded.time_units();
            let head = [(ms as u64, ms as f64), (units, units as f64)];
            let fields = decoded.fields().map(|(_, v)| (v, v as f64));
            reply::numbers_and_doubles(head.into_iter().chain(fields));
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

/// Decodes `id` into the output as the core's JSON breakdown, the API's
/// shape: `{"id","layout","timestamp_ms","time","fields","binary",
/// "segments","text"}`.
#[unsafe(no_mangle)]
pub extern "C" fn sf_breakdown(layout: i32, id: i64) -> i32 {
    with_layout(layout, |layout| match layout.decode(Id::new(id as u64)) {
        Ok(decoded) => {
            reply::json(&decoded);
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

/// Composes an ID from `timestamp_ms` and the fields in the input, written
/// `name\0value\0name\0value…` (empty for none), each value read and checked
/// as the command reads `--field name=value`. The ID is the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose(layout: i32, timestamp_ms: i64) -> i32 {
    with_layout(layout, |layout| {
        let composed = reply::with_input(|input| {
            let values = field_values(layout, input)?;
            let pairs: Vec<(&str, u64)> = values.iter().map(|(n, v)| (*n, *v)).collect();
            layout.compose(timestamp_ms, &pairs)
        });
        reply::number_or_error(composed.map(Id::get))
    })
}

/// Composes an ID from `timestamp_ms` and `count` fields given by their
/// place in the layout: the numbers hold `place, value` pairs in the order
/// the caller gave them, which is the order the core checks them in. The
/// ID is the first number. The glue comes here for values it holds as whole
/// numbers, and to `sf_compose` for text, which the core reads.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose_values(layout: i32, timestamp_ms: i64, count: usize) -> i32 {
    let pairs =
        reply::read_numbers(|nums| Pairs::gather(count, |i| (nums[2 * i], nums[2 * i + 1])));
    compose_placed(layout, timestamp_ms, pairs)
}

/// As `sf_compose_values`, for a time and values that JavaScript holds as
/// Numbers: the pairs are in the doubles, and every one is a whole number
/// below 2^53, which the glue checked, so each converts exactly.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose_doubles(layout: i32, timestamp_ms: f64, count: usize) -> i32 {
    let pairs = reply::read_doubles(|doubles| {
        Pairs::gather(count, |i| {
            (doubles[2 * i] as u64, doubles[2 * i + 1] as u64)
        })
    });
    compose_placed(layout, timestamp_ms as i64, pairs)
}

/// `sf_compose_doubles` with the ID itself as the answer, which JavaScript
/// receives as a `BigInt` without reading memory: the glue's fast path.
/// The answer is signed: `-1` is a refusal (and also the ID 2^64 - 1), and
/// every ID from 2^63 up comes back negative. On any negative answer the
/// glue calls `sf_compose_doubles` with the same values (compose is pure),
/// which gives the ID unsigned, or the core's error.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose_doubles_id(layout: i32, timestamp_ms: f64, count: usize) -> i64 {
    let Some(pairs) = reply::read_doubles(|doubles| {
        Pairs::gather(count, |i| {
            (doubles[2 * i] as u64, doubles[2 * i + 1] as u64)
        })
    }) else {
        return ASK_AGAIN;
    };
    LAYOUTS.with(|layouts| match layouts.borrow().get(layout) {
        Some(layout) => layout
            .compose_placed(timestamp_ms as i64, pairs.as_slice())
            .map_or(ASK_AGAIN, |id| id.get() as i64),
        None => ASK_AGAIN,
    })
}

/// `sf_compose_doubles_id`'s refusal: the glue asks `sf_compose_doubles`
/// for the error (or the ID 2^64 - 1, which this answer cannot tell apart).
const ASK_AGAIN: i64 = -1;

/// The (place, value) pairs of one compose, copied out of the tables before
/// the core runs (the answer goes back into them): a few, the usual case,
/// on the stack.
enum Pairs {
    Few([(usize, u64); 8], usize),
    Many(Vec<(usize, u64)>),
}

impl Pairs {
    /// The first `count` pairs `pair` gives, or `None` for more than the
    /// tables hold. A place past any layout's fields stays one, for the core
    /// to refuse.
    fn gather(count: usize, pair: impl Fn(usize) -> (u64, u64)) -> Option<Pairs> {
        if count > reply::NUMS / 2 {
            return None;
        }
        let placed = |i| {
            let (place, value) = pair(i);
            (usize::try_from(place).unwrap_or(usize::MAX), value)
        };
        let mut few = [(0, 0); 8];
        if count > few.len() {
            return Some(Pairs::Many((0..count).map(placed).collect()));
        }
        for (i, slot) in few.iter_mut().enumerate().take(count) {
            *slot = placed(i);
        }
        Some(Pairs::Few(few, count))
    }

    fn as_slice(&self) -> &[(usize, u64)] {
        match self {
            Pairs::Few(few, count) => &few[..*count],
            Pairs::Many(many) => many,
        }
    }
}

/// Composes with the fields given by place, in the order given, through
/// the core's checked compose by place.
fn compose_placed(layout: i32, timestamp_ms: i64, pairs: Option<Pairs>) -> i32 {
    let Some(pairs) = pairs else {
        return reply::stale("field");
    };
    with_layout(layout, |layout| {
        reply::number_or_error(
            layout
                .compose_placed(timestamp_ms, pairs.as_slice())
                .map(Id::get),
        )
    })
}

/// The ID read under every preset, judged against `now_ms`, into the output
/// as the core's JSON (the API's `?layout=all`).
#[unsafe(no_mangle)]
pub extern "C" fn sf_readings(id: i64, now_ms: i64) -> i32 {
    PRESETS.with(|presets| reply::json(&Readings::new(presets, Id::new(id as u64), now_ms)));
    DONE
}

/// The first and last ID of the window from `from_ms` to `to_ms`, both
/// inclusive: the first two numbers, and the core's JSON in the output.
#[unsafe(no_mangle)]
pub extern "C" fn sf_bounds(layout: i32, from_ms: i64, to_ms: i64) -> i32 {
    with_layout(layout, |layout| match layout.bounds(from_ms, to_ms) {
        Ok(bounds) => {
            reply::json(&bounds);
            reply::numbers([bounds.first().get(), bounds.last().get()]);
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

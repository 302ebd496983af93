//! Layouts: read as the command reads them, kept by handle, asked about
//! one field or one time.

use snowflake::{Layout, UnixMillis};

use super::tables::Described;
use super::{SEP, with_layout};
use crate::registry::LAYOUTS;
use crate::reply;

/// Bit 0 of `sf_layout_new`'s `given`: an epoch follows the spec.
pub(super) const EPOCH_GIVEN: i32 = 1;
/// Bit 1: a tick follows.
pub(super) const TICK_GIVEN: i32 = 2;

/// A layout from the input, `spec` or `spec\0epoch\0tick` as `given` says
/// (bit 0 an epoch, bit 1 a tick), read as the command reads `--layout`,
/// `--epoch` (Unix milliseconds) and `--tick-ms`. Returns its handle and
/// leaves its JSON in the output, and in the numbers, exactly, its epoch,
/// tick, last millisecond and largest ID, then each field's largest value
/// and shift, most significant first.
#[unsafe(no_mangle)]
pub extern "C" fn sf_layout_new(given: i32) -> i32 {
    let parsed = reply::with_input(|input| {
        let mut parts = input.split(SEP);
        let spec = parts.next().unwrap_or_default();
        let epoch = (given & EPOCH_GIVEN != 0).then(|| parts.next().unwrap_or_default());
        let tick = (given & TICK_GIVEN != 0).then(|| parts.next().unwrap_or_default());
        resolve_layout(spec, epoch, tick)
    });
    let layout = match parsed {
        Ok(layout) => layout,
        Err(err) => return reply::core_error(&err),
    };
    reply::json(&Described::new(&layout));
    let head = [
        layout.epoch_ms() as u64,
        layout.tick_ms(),
        layout.last_timestamp_ms() as u64,
        layout.max_id().get(),
    ];
    let fields = layout
        .fields()
        .iter()
        .flat_map(|f| [f.max(), u64::from(f.shift())]);
    reply::numbers(head.into_iter().chain(fields));
    keep_layout(layout)
}

/// As `snowflake_io::resolve_layout`, which the command and the API call,
/// with the epoch read by [`UnixMillis::parse`] alone: `jiff`, which reads
/// what else Temporal allows there, would outweigh this module with its
/// time zone database. The words of each error are the same.
fn resolve_layout(
    spec: &str,
    epoch: Option<&str>,
    tick: Option<&str>,
) -> Result<Layout, snowflake::Error> {
    let mut layout = Layout::parse(spec)?;
    if let Some(epoch) = epoch {
        layout = layout.with_epoch_ms(UnixMillis::parse("epoch", epoch)?.0)?;
    }
    if let Some(tick) = tick {
        let ms = tick.trim().parse::<u64>().map_err(|_| {
            snowflake::Error::invalid_value(
                "tick_ms",
                tick,
                "a tick is a whole number of milliseconds, at least 1",
            )
        })?;
        layout = layout.with_tick_ms(ms)?;
    }
    Ok(layout)
}

fn keep_layout(layout: Layout) -> i32 {
    LAYOUTS
        .with(|layouts| layouts.borrow_mut().insert(layout))
        .unwrap_or_else(|| reply::stale("layout"))
}

/// Frees a layout.
#[unsafe(no_mangle)]
pub extern "C" fn sf_layout_free(layout: i32) {
    LAYOUTS.with(|layouts| layouts.borrow_mut().remove(layout));
}

/// The value of the field the input names, `name\0text`, read by the
/// layout's one field-value parser: the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_parse_value(layout: i32) -> i32 {
    with_layout(layout, |layout| {
        let parsed = reply::with_input(|input| {
            let (name, text) = input.split_once(SEP).unwrap_or((input, ""));
            layout.parse_value(name, text)
        });
        reply::number_or_error(parsed)
    })
}

/// The layout's time units at `timestamp_ms`, the first number; or the
/// core's error for a time before its epoch or past its last.
#[unsafe(no_mangle)]
pub extern "C" fn sf_time_units(layout: i32, timestamp_ms: i64) -> i32 {
    with_layout(layout, |layout| {
        reply::number_or_error(layout.time_units(timestamp_ms))
    })
}

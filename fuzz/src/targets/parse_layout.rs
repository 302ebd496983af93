//! `Layout::parse`, the one layout parser behind the CLI's `--layout` and the
//! HTTP API: it never panics, what it accepts fills at most 64 bits and reads
//! back from its own spec or name, and composing then decoding through it
//! gives back the parts.
//!
//! Read an artifact with `cargo fuzz fmt parse_layout <artifact>`.

use crate::{check_custom_sequence, check_decode, check_shape, check_time_range};
use arbitrary::{Arbitrary, Unstructured};
use snowflake::{ErrorKind, Layout};

/// The spec comes last so that it takes the rest of the input; the numbers
/// before it are fixed-size, so no byte of the spec is read as a length.
#[derive(Debug, Arbitrary)]
pub struct Input<'a> {
    /// Move the layout to `epoch_ms` and `tick_ms` before composing.
    retime: bool,
    epoch_ms: i64,
    tick_ms: u64,
    /// Use all of `tick_ms`; otherwise a tick of 0 to 1000 ms, since nearly
    /// every wide tick overflows the time range and tests only the refusal.
    wide_tick: bool,
    /// Pull the timestamp and field values into the layout's ranges, so that
    /// most runs compose; otherwise most are out of range and test the errors.
    in_range: bool,
    timestamp_ms: i64,
    /// Values for the fields, reused round-robin when there are more fields.
    values: [u64; 8],
    /// Bit `i % 64` leaves field `i` out, so it composes as 0.
    omit: u64,
    /// The end of the `bounds` window, which starts at `timestamp_ms`.
    to_ms: i64,
    /// An ID to decode with the layout.
    id: u64,
    spec: &'a str,
}

/// One run on raw fuzzer bytes, read as libFuzzer's typed targets read
/// them (`arbitrary_take_rest`).
pub fn run(data: &[u8]) {
    if let Ok(input) = <Input<'_>>::arbitrary_take_rest(Unstructured::new(data)) {
        check(input);
    }
}

/// The property, on one input.
pub fn check(input: Input<'_>) {
    let layout = match Layout::parse(input.spec) {
        Ok(layout) => layout,
        Err(err) => {
            assert_eq!(
                err.kind(),
                ErrorKind::InvalidInput,
                "{:?}: {err}",
                input.spec
            );
            return;
        }
    };
    check_shape(&layout);
    check_time_range(&layout);

    let spec = layout.spec();
    let custom = Layout::parse(&spec).expect("a layout's spec parses");
    assert_eq!(custom.spec(), spec);
    check_custom_sequence(&custom);
    // A preset reads back by name; a custom layout's name is its spec.
    assert_eq!(Layout::parse(&layout.name()).as_ref(), Ok(&layout));
    if !Layout::PRESETS.contains(&layout.name().as_ref()) {
        assert_eq!(custom, layout);
    }

    let layout = if input.retime {
        retime(layout, &input)
    } else {
        layout
    };
    check_compose(&layout, &input);
    check_bounds(&layout, input.timestamp_ms, input.to_ms);
    check_decode(&layout, input.id.into());
}

/// Moves the epoch and tick, which succeeds exactly when the last time unit
/// still ends within `i64` milliseconds.
fn retime(layout: Layout, input: &Input<'_>) -> Layout {
    let fits = |epoch_ms: i64, tick_ms: u64| {
        let end =
            i128::from(epoch_ms) + (i128::from(layout.max_time_units()) + 1) * i128::from(tick_ms);
        end <= i128::from(i64::MAX)
    };
    let tick_ms = if input.wide_tick {
        input.tick_ms
    } else {
        input.tick_ms % 1001
    };
    let expect_epoch = fits(input.epoch_ms, layout.tick_ms());
    let expect_tick = expect_epoch && tick_ms >= 1 && fits(input.epoch_ms, tick_ms);

    let moved = match layout.clone().with_epoch_ms(input.epoch_ms) {
        Ok(moved) => {
            assert!(expect_epoch, "{layout:?} took epoch {}", input.epoch_ms);
            assert_eq!(moved.epoch_ms(), input.epoch_ms);
            moved
        }
        Err(err) => {
            assert!(
                !expect_epoch,
                "{layout:?} refused epoch {}: {err}",
                input.epoch_ms
            );
            return layout;
        }
    };
    let moved = match moved.clone().with_tick_ms(tick_ms) {
        Ok(moved) => {
            assert!(expect_tick, "{moved:?} took tick {tick_ms}");
            assert_eq!(moved.tick_ms(), tick_ms);
            moved
        }
        Err(err) => {
            assert!(!expect_tick, "{moved:?} refused tick {tick_ms}: {err}");
            moved
        }
    };
    check_time_range(&moved);
    moved
}

/// `compose` succeeds exactly when the timestamp and every value are in
/// range, and the ID decodes to what went in.
fn check_compose(layout: &Layout, input: &Input<'_>) {
    let epoch = i128::from(layout.epoch_ms());
    let span = i128::from(layout.last_timestamp_ms()) - epoch + 1;
    let timestamp_ms = if input.in_range {
        let wrapped = epoch + (i128::from(input.timestamp_ms) - epoch).rem_euclid(span);
        i64::try_from(wrapped).expect("the layout's times fit in i64")
    } else {
        input.timestamp_ms
    };

    let mut values = Vec::new();
    let mut in_range = layout.time_units(timestamp_ms).is_ok();
    for (i, field) in layout.fields().iter().enumerate() {
        if (input.omit >> (i % 64)) & 1 == 1 {
            continue;
        }
        let raw = input.values[i % input.values.len()];
        let value = if input.in_range {
            raw & field.max()
        } else {
            raw
        };
        let fits = value <= field.max();
        assert_eq!(
            layout.parse_value(field.name(), &value.to_string()).ok(),
            fits.then_some(value),
            "{layout:?}: {} {value}",
            field.name()
        );
        in_range &= fits;
        values.push((field.name(), value));
    }

    let id = match layout.compose(timestamp_ms, &values) {
        Ok(id) => id,
        Err(err) => {
            assert!(
                !in_range,
                "{layout:?} refused {timestamp_ms} {values:?}: {err}"
            );
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
            return;
        }
    };
    assert!(
        in_range,
        "{layout:?} composed {timestamp_ms} {values:?} as {id}"
    );
    assert!(id <= layout.max_id(), "{layout:?}: {id}");
    if let Some(&first) = values.first() {
        let mut twice = values.clone();
        twice.push(first);
        assert!(layout.compose(timestamp_ms, &twice).is_err(), "{twice:?}");
    }

    let decoded = layout.decode(id).expect("a composed ID decodes");
    for field in layout.fields() {
        let given = values
            .iter()
            .find(|(name, _)| *name == field.name())
            .map_or(0, |&(_, value)| value);
        assert_eq!(decoded.field(field.name()), Some(given), "{layout:?}: {id}");
    }
    assert_eq!(
        layout.time_units(timestamp_ms).ok(),
        Some(decoded.time_units())
    );
    // Decoding floors the time to the start of its tick.
    let floored = decoded.timestamp_ms();
    let lag = i128::from(timestamp_ms) - i128::from(floored);
    assert!(
        (0..i128::from(layout.tick_ms())).contains(&lag),
        "{layout:?}: {timestamp_ms} decoded as {floored}"
    );
    check_decode(layout, id);
}

/// `bounds` succeeds exactly for an ordered window inside the time range, and
/// spans every ID of its first to its last time unit.
fn check_bounds(layout: &Layout, from_ms: i64, to_ms: i64) {
    let valid =
        from_ms <= to_ms && layout.time_units(from_ms).is_ok() && layout.time_units(to_ms).is_ok();
    let bounds = match layout.bounds(from_ms, to_ms) {
        Ok(bounds) => bounds,
        Err(err) => {
            assert!(!valid, "{layout:?} refused {from_ms}..={to_ms}: {err}");
            return;
        }
    };
    assert!(valid, "{layout:?} bounded {from_ms}..={to_ms}");
    assert_eq!((bounds.from_ms(), bounds.to_ms()), (from_ms, to_ms));
    assert!(bounds.first() <= bounds.last(), "{bounds:?}");
    assert_eq!(layout.compose(from_ms, &[]).ok(), Some(bounds.first()));
    let maxed: Vec<(&str, u64)> = layout
        .fields()
        .iter()
        .map(|f| (f.name(), f.max()))
        .collect();
    assert_eq!(layout.compose(to_ms, &maxed).ok(), Some(bounds.last()));
    serde_json::to_string(&bounds).expect("bounds serialise");
}

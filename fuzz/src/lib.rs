//! Checks shared by the fuzz targets in `fuzz_targets/`.
//!
//! Each check states what the core promises in its docs and panics when it
//! does not hold, so libFuzzer records the input as a crash.

pub mod targets;

use snowflake::{Decoded, Id, Layout};

/// The widths fill the ID exactly, most significant first, with no gaps.
pub fn check_shape(layout: &Layout) {
    let field_bits: u32 = layout.fields().iter().map(|f| u32::from(f.bits())).sum();
    let total = u32::from(layout.time_bits()) + field_bits;
    assert!(total <= 64, "{layout:?}: widths add up to {total}");
    assert_eq!(u32::from(layout.bits()), total, "{layout:?}");
    assert_eq!(layout.has_sign_bit(), total == 63, "{layout:?}");
    assert_eq!(u32::from(layout.time_shift()), field_bits, "{layout:?}");

    // Fields are listed most significant first, so each sits on top of the
    // ones after it.
    let mut below = field_bits;
    for field in layout.fields() {
        below -= u32::from(field.bits());
        assert_eq!(u32::from(field.shift()), below, "{layout:?}: {field:?}");
        assert_eq!(
            u128::from(field.max()) + 1,
            1u128 << field.bits(),
            "{field:?}"
        );
        assert_eq!(layout.field(field.name()), Some(field));
    }

    let max_id = (u128::pow(2, total) - 1) as u64;
    assert_eq!(layout.max_id(), Id::new(max_id), "{layout:?}");

    let node_bits: u32 = layout.node_fields().map(|f| u32::from(f.bits())).sum();
    assert_eq!(layout.node_count(), 1u128 << node_bits, "{layout:?}");
    assert_eq!(
        layout.ids_per_tick().map(u128::from),
        layout.sequence().map(|f| 1u128 << f.bits()),
        "{layout:?}"
    );
    serde_json::to_string(layout).expect("a layout serialises");
}

/// The time field's range: the epoch is unit 0, the last millisecond is the
/// last unit, and one millisecond either side is refused.
pub fn check_time_range(layout: &Layout) {
    let epoch = layout.epoch_ms();
    let last = layout.last_timestamp_ms();
    let tick = i128::from(layout.tick_ms());
    let units = layout.max_time_units();
    assert!(tick >= 1, "{layout:?}");
    assert_eq!(
        i128::from(last),
        i128::from(epoch) + (i128::from(units) + 1) * tick - 1,
        "{layout:?}"
    );
    assert_eq!(layout.time_units(epoch).ok(), Some(0), "{layout:?}");
    assert_eq!(layout.time_units(last).ok(), Some(units), "{layout:?}");
    assert_eq!(
        i128::from(layout.timestamp_ms(units)),
        i128::from(last) - tick + 1
    );
    if let Some(before) = epoch.checked_sub(1) {
        let err = layout.time_units(before).expect_err("before the epoch");
        assert_eq!(err.field(), Some("timestamp"), "{err}");
    }
    if let Some(after) = last.checked_add(1) {
        let err = layout.time_units(after).expect_err("after the last time");
        assert_eq!(err.field(), Some("timestamp"), "{err}");
    }
}

/// Decoding any ID: it fails only on a bit set above the layout's width
/// (the sign bit, or a narrow layout's unused bits), and otherwise reads back
/// into the parts that compose the same ID, in the one JSON shape.
pub fn check_decode(layout: &Layout, id: Id) {
    let too_wide = u32::from(layout.bits()) < 64 && id.get() >> layout.bits() != 0;
    let decoded = match layout.decode(id) {
        Ok(decoded) => decoded,
        Err(err) => {
            assert!(too_wide, "{layout:?} {id}: {err}");
            assert_eq!(err.field(), Some("id"), "{err}");
            return;
        }
    };
    assert!(!too_wide, "{layout:?} decoded {id}");
    assert_eq!(decoded.id(), id);

    let binary = decoded.binary();
    assert_eq!(binary, format!("{:064b}", id.get()));
    check_segments(layout, &decoded, &binary);

    let units = decoded.time_units();
    let timestamp_ms = decoded.timestamp_ms();
    assert_eq!(timestamp_ms, layout.timestamp_ms(units));
    assert!(
        (layout.epoch_ms()..=layout.last_timestamp_ms()).contains(&timestamp_ms),
        "{layout:?} {id}: {timestamp_ms}"
    );
    assert_eq!(layout.time_units(timestamp_ms).ok(), Some(units), "{id}");

    let fields: Vec<(&str, u64)> = decoded.fields().collect();
    for (field, &(name, value)) in layout.fields().iter().zip(&fields) {
        assert_eq!(field.name(), name);
        assert!(value <= field.max(), "{id}: {name} {value}");
        assert_eq!(decoded.field(name), Some(value));
    }
    assert_eq!(fields.len(), layout.fields().len());
    assert_eq!(
        decoded.sequence(),
        layout.sequence().and_then(|f| decoded.field(f.name()))
    );
    assert_eq!(
        layout.compose(timestamp_ms, &fields).ok(),
        Some(id),
        "{layout:?}: {id} does not recompose from {timestamp_ms} {fields:?}"
    );

    let json = serde_json::to_value(decoded).expect("a decoded ID serialises");
    assert_eq!(json["id"], id.to_string());
    assert_eq!(json["layout"], layout.name().as_ref());
    assert_eq!(json["timestamp_ms"], timestamp_ms);
    assert_eq!(json["time"], decoded.time().to_string());
    assert_eq!(json["binary"], binary);
    let json_segments = json["segments"].as_array().expect("segments is an array");
    assert_eq!(json_segments.len(), decoded.segments().len());
}

/// The segments cover all 64 bits, most significant first: the sign bit when
/// the layout has one (the unused bits of a narrower one), the timestamp,
/// then every field.
fn check_segments(layout: &Layout, decoded: &Decoded<'_>, binary: &str) {
    let segments = decoded.segments();
    let joined: String = segments.iter().map(|s| s.binary()).collect();
    assert_eq!(joined, binary, "{layout:?}: {segments:?}");
    for segment in &segments {
        assert_eq!(
            segment.binary().len(),
            usize::from(segment.bits()),
            "{segment:?}"
        );
    }
    let mut names: Vec<&str> = Vec::new();
    match layout.bits() {
        64 => {}
        63 => names.push(Layout::SIGN_FIELD),
        _ => names.push(Layout::UNUSED_FIELD),
    }
    names.push(Layout::TIME_FIELD);
    names.extend(layout.fields().iter().map(|f| f.name()));
    let segment_names: Vec<&str> = segments.iter().map(|s| s.name()).collect();
    assert_eq!(segment_names, names);
    let time = segments[usize::from(layout.bits() < 64)];
    assert_eq!(time.value(), decoded.time_units());
}

/// A custom layout's sequence is the field named `sequence`.
pub fn check_custom_sequence(layout: &Layout) {
    assert_eq!(
        layout.sequence().map(|f| f.name()),
        layout.field(Layout::SEQUENCE_FIELD).map(|f| f.name()),
        "{layout:?}"
    );
}

//! Layouts end to end: published IDs and their decodings, the limits of
//! compose and decode, bounds, and properties over random layouts and input.

use proptest::prelude::*;
use snowflake::{ErrorKind, Id, Layout};

use crate::support::EPOCH;

/// Every field of Twitter's layout at its largest.
const TWITTER_FULL: &[(&str, u64)] = &[("datacenter", 31), ("machine", 31), ("sequence", 4095)];

#[test]
fn worked_example_and_its_bits() {
    let twitter = Layout::twitter();
    let id = twitter
        .compose(
            1288834975657,
            &[("datacenter", 1), ("machine", 1), ("sequence", 0)],
        )
        .unwrap();
    assert_eq!(id.get(), 4194439168);
    let d = twitter.decode(id).unwrap();
    let bits: Vec<String> = d.segments().iter().map(|s| s.binary()).collect();
    assert_eq!(
        bits.join(" | "),
        "0 | 00000000000000000000000000000001111101000 | 00001 | 00001 | 000000000000"
    );
    assert_eq!(d.binary(), bits.concat());
    assert_eq!(d.binary().len(), 64);
}

// The JSON shape exists only with the `serde` feature.
#[cfg(feature = "serde")]
#[test]
fn json_shape_is_the_documented_one() {
    let twitter = Layout::twitter();
    let d = twitter.decode(Id::new(4194439168)).unwrap();
    let json = serde_json::to_value(d).unwrap();
    let expected = serde_json::json!({
        "id": "4194439168",
        "layout": "twitter",
        "timestamp_ms": 1288834975657i64,
        "time": "2010-11-04T01:42:55.657Z",
        "fields": {"datacenter": 1, "machine": 1, "sequence": 0},
        "binary": "0000000000000000000000000000000011111010000000100001000000000000",
        "segments": [
            {"name": "sign", "bits": 1, "value": 0, "binary": "0"},
            {"name": "timestamp", "bits": 41, "value": 1000, "binary": "00000000000000000000000000000001111101000"},
            {"name": "datacenter", "bits": 5, "value": 1, "binary": "00001"},
            {"name": "machine", "bits": 5, "value": 1, "binary": "00001"},
            {"name": "sequence", "bits": 12, "value": 0, "binary": "000000000000"}
        ],
        "text": {"hex": "0xfa021000", "base32": "0000003X04400", "base62": "000004ZrREe", "base58": "7Pebdh"}
    });
    assert_eq!(json, expected);
    let discord = Layout::discord();
    let json = serde_json::to_value(discord.decode(Id::new(175928847299117063)).unwrap()).unwrap();
    assert_eq!(json["segments"][0]["name"], "timestamp");
    assert_eq!(json["fields"]["increment"], 7);
    assert_eq!(
        json["text"],
        serde_json::json!({"hex": "0x271065ac1020007", "base32": "04W86BB0G4007", "base62": "0Czks0tP37X", "base58": "QgmVVkniES"})
    );
}

#[test]
fn twitter_limits_both_ways() {
    let twitter = Layout::twitter();
    let err = twitter.compose(1288834974656, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "timestamp 1288834974656 (2010-11-04T01:42:54.656Z) is before the layout's epoch \
         1288834974657 (2010-11-04T01:42:54.657Z)"
    );
    assert_eq!(twitter.compose(1288834974657, &[]).unwrap().get(), 0);
    let max = twitter.compose(3487858230208, TWITTER_FULL).unwrap();
    assert_eq!(max.get(), 9223372036854775807);
    let err = twitter.compose(3487858230209, &[]).unwrap_err();
    assert!(
        err.to_string()
            .contains("3487858230208 (2080-07-10T17:30:30.208Z)"),
        "{err}"
    );
    // One more than the largest is refused, naming the field.
    for &(field, largest) in TWITTER_FULL {
        let err = twitter.compose(EPOCH, &[(field, largest + 1)]).unwrap_err();
        assert_eq!(err.field(), Some(field));
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
    assert!(twitter.decode(Id::new(1 << 63)).is_err());
    assert!(twitter.decode(Id::new(i64::MAX as u64)).is_ok());
}

/// IDs with decodings published by their owners or in other projects' docs.
#[test]
fn published_ids_decode_as_published() {
    type Fields = &'static [(&'static str, u64)];
    // The layout, the ID, its Unix millisecond and time, and its fields
    // where they were published.
    let published: [(Layout, u64, i64, &str, Option<Fields>); 5] = [
        // Wikipedia's example tweet ID.
        (
            Layout::twitter(),
            1541815603606036480,
            1656432460105,
            "2022-06-28T16:07:40.105Z",
            Some(&[("datacenter", 11), ("machine", 26), ("sequence", 0)]),
        ),
        // Twitter's developer docs: tweet 1212092628029698048 was posted
        // "Tue Dec 31 19:26:16 +0000 2019"; its ID says 19:26:16.771.
        (
            Layout::twitter(),
            1212092628029698048,
            1577820376771,
            "2019-12-31T19:26:16.771Z",
            None,
        ),
        // Discord's documentation example.
        (
            Layout::discord(),
            175928847299117063,
            1462015105796,
            "2016-04-30T11:18:25.796Z",
            Some(&[("worker", 1), ("process", 0), ("increment", 7)]),
        ),
        // Discord's API docs: user ID 80351110224678912, made 2015-08-10.
        (
            Layout::discord(),
            80351110224678912,
            1439227597529,
            "2015-08-10T17:26:37.529Z",
            None,
        ),
        // Mastodon: 48 bits of Unix ms and 16 bits of sequence.
        (
            Layout::mastodon(),
            109_372_843_387_334_656,
            109_372_843_387_334_656 >> 16,
            "2022-11-19T22:32:26.413Z",
            None,
        ),
    ];
    for (layout, id, ms, time, fields) in published {
        let d = layout.decode(Id::new(id)).unwrap();
        let under = format!("{id} under {}", layout.name());
        assert_eq!(d.timestamp_ms(), ms, "{under}");
        assert_eq!(d.time().to_string(), time, "{under}");
        if let Some(fields) = fields {
            assert_eq!(d.fields().collect::<Vec<_>>(), fields, "{under}");
        }
    }
    // Composed from what was published: the layout, the Unix millisecond,
    // the fields, and the ID's bits.
    let composed: [(Layout, i64, Fields, u64); 2] = [
        // Sonyflake's README: the ID's upper bits are 10 ms units since 2014-09-01.
        (
            Layout::sonyflake(),
            1409529600000 + 12_345_670,
            &[("sequence", 3), ("machine", 258)],
            (1_234_567u64 << 24) | (3 << 16) | 258,
        ),
        // Instagram's engineering blog: 41 bits of ms since their epoch,
        // 13-bit shard 1341, 10-bit sequence 7.
        (
            Layout::instagram(),
            1314220021721 + 1387263000,
            &[("shard", 1341), ("sequence", 7)],
            (1387263000u64 << 23) | (1341 << 10) | 7,
        ),
    ];
    for (layout, ms, fields, bits) in composed {
        let id = layout.compose(ms, fields).unwrap();
        assert_eq!(id.get(), bits, "{ms} under {}", layout.name());
    }
}

#[test]
fn bounds_cover_the_window_and_reject_bad_windows() {
    let twitter = Layout::twitter();
    let b = twitter.bounds(1288834975657, 1288834975659).unwrap();
    let inside = twitter
        .compose(1288834975658, &[("machine", 31), ("sequence", 4095)])
        .unwrap();
    assert!(b.range().contains(&inside));
    let before = twitter.compose(1288834975656, TWITTER_FULL).unwrap();
    assert!(!b.range().contains(&before));
    let after = twitter.compose(1288834975660, &[]).unwrap();
    assert!(!b.range().contains(&after));
    assert_eq!(twitter.bounds(5, 4).unwrap_err().field(), Some("from"));
    assert!(twitter.bounds(0, EPOCH).is_err());
}

fn arb_layout() -> impl Strategy<Value = Layout> {
    let preset = (0usize..Layout::presets().len()).prop_map(|i| Layout::presets()[i].clone());
    let custom = (
        1u8..=63,
        // How many top bits are not used: none, the sign bit, or more.
        prop_oneof![Just(0u8), Just(1u8), 2u8..=40],
        prop::collection::vec(1u8..=16, 0..5),
        any::<bool>(),
        -1i64 << 40..1i64 << 41,
        1u64..2000,
    )
        .prop_filter_map(
            "widths must fit",
            |(time, sign, fields, with_seq, epoch, tick)| {
                let used: u32 = u32::from(time) + fields.iter().map(|&b| u32::from(b)).sum::<u32>();
                let total = 64 - u32::from(sign);
                if used >= total || total - used > 63 {
                    return None;
                }
                let mut b = Layout::builder()
                    .epoch_ms(epoch)
                    .tick_ms(tick)
                    .time_bits(time);
                for (i, bits) in fields.iter().enumerate() {
                    b = b.field(format!("f{i}"), *bits);
                }
                let rest = (total - used) as u8;
                b = if with_seq {
                    b.sequence("sequence", rest)
                } else {
                    b.field("last", rest)
                };
                b.build().ok()
            },
        );
    prop_oneof![preset, custom]
}

proptest! {
    #[test]
    fn compose_then_decode_is_the_identity(layout in arb_layout(), seed in any::<u64>(), t in any::<u64>()) {
        let span = layout.last_timestamp_ms() - layout.epoch_ms();
        let ts = layout.epoch_ms() + (t % (span as u64 + 1)) as i64;
        let mut values = Vec::new();
        let mut s = seed;
        for f in layout.fields() {
            s = s.rotate_left(13) ^ 0x9e37_79b9_7f4a_7c15;
            values.push((f.name().to_string(), s & f.max()));
        }
        let pairs: Vec<(&str, u64)> = values.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let id = layout.compose(ts, &pairs).unwrap();
        prop_assert!(id <= layout.max_id());
        if layout.bits() < 64 {
            prop_assert_eq!(id.get() >> layout.bits(), 0);
        }
        // Exactly the IDs above the layout's width are refused.
        let above = layout.max_id().get().checked_add(1 + (seed >> layout.bits().min(63)));
        if let Some(above) = above {
            let err = layout.decode(Id::new(above)).unwrap_err();
            prop_assert_eq!(err.field(), Some("id"));
        }
        prop_assert!(layout.decode(layout.max_id()).is_ok());
        prop_assert_eq!(layout.is_js_safe(), layout.bits() <= 53);
        let d = layout.decode(id).unwrap();
        let floored = ts - (ts - layout.epoch_ms()) % layout.tick_ms() as i64;
        prop_assert_eq!(d.timestamp_ms(), floored);
        for (name, value) in &pairs {
            prop_assert_eq!(d.field(name), Some(*value));
        }
        let bits: String = d.segments().iter().map(|s| s.binary()).collect();
        prop_assert_eq!(bits, d.binary());
        // The one parser reads back what Display writes.
        prop_assert_eq!(id.to_string().parse::<Id>().unwrap(), id);
        prop_assert_eq!(format!("{id:#x}").parse::<Id>().unwrap(), id);
    }

    /// Random field names, values, times and text: every outcome is checked
    /// against what the layout allows, not only that nothing panics.
    #[test]
    fn every_input_gets_the_answer_the_layout_implies(
        layout in arb_layout(),
        ts in prop_oneof![any::<i64>(), (0i64..1 << 44)],
        pick in any::<prop::sample::Index>(),
        known in any::<bool>(),
        other in "[a-z]{1,12}",
        value in prop_oneof![any::<u64>(), 0u64..70_000],
        span in prop_oneof![any::<i64>(), 0i64..1 << 30],
        text in prop_oneof![".{0,24}", "[0-9]{1,21}", "-[0-9]{1,4}", "0x[0-9a-fA-F]{1,17}"],
    ) {
        let fields = layout.fields();
        let field = if known { fields[pick.index(fields.len())].name().to_string() } else { other };
        let found = layout.field(&field);
        let in_time = ts >= layout.epoch_ms() && ts <= layout.last_timestamp_ms();
        let floor = |t: i64| t - (t - layout.epoch_ms()) % layout.tick_ms() as i64;

        // compose: time first, then the name, then the value.
        match layout.compose(ts, &[(field.as_str(), value)]) {
            Ok(id) => {
                prop_assert!(in_time && found.is_some_and(|f| value <= f.max()));
                let d = layout.decode(id).unwrap();
                prop_assert_eq!(d.field(&field), Some(value));
                prop_assert_eq!(d.timestamp_ms(), floor(ts));
            }
            Err(err) => {
                prop_assert_eq!(err.kind(), ErrorKind::InvalidInput);
                match found {
                    _ if !in_time => prop_assert_eq!(err.field(), Some("timestamp")),
                    None => {
                        prop_assert_eq!(err.field(), Some(field.as_str()));
                        prop_assert!(err.to_string().contains("the layout has no field"), "{}", err);
                    }
                    Some(f) => {
                        prop_assert!(value > f.max());
                        prop_assert_eq!(err.to_string(), format!("{} {} is out of range: 0 to {} ({} bits)", f.name(), value, f.max(), f.bits()));
                    }
                }
            }
        }

        // parse_value: digits within the field's width, nothing else.
        let expected = found.and_then(|f| {
            let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| text.parse::<u64>().ok()).flatten().filter(|v| *v <= f.max())
        });
        match layout.parse_value(&field, &text) {
            Ok(v) => prop_assert_eq!(Some(v), expected),
            Err(err) => {
                prop_assert_eq!(expected, None);
                prop_assert_eq!(err.field(), Some(field.as_str()));
            }
        }

        // bounds: a window inside the time field, from before to.
        let to = ts.wrapping_add(span);
        let to_in_time = to >= layout.epoch_ms() && to <= layout.last_timestamp_ms();
        match layout.bounds(ts, to) {
            Ok(b) => {
                prop_assert!(ts <= to && in_time && to_in_time);
                prop_assert_eq!(b.first(), layout.compose(ts, &[]).unwrap());
                prop_assert!(b.first() <= b.last());
                prop_assert_eq!(layout.decode(b.last()).unwrap().timestamp_ms(), floor(to));
                if let Some(next) = b.last().get().checked_add(1) {
                    prop_assert!(layout.decode(Id::new(next)).map_or(true, |d| d.timestamp_ms() > floor(to)));
                }
            }
            Err(_) => prop_assert!(ts > to || !in_time || !to_in_time),
        }

        // The ID parser: decimal, or hexadecimal after 0x, with no more
        // digits than u64::MAX has (20 and 16), leading zeros included.
        let (digits, radix, most) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => (hex, 16, 16),
            None => (text.as_str(), 10, 20),
        };
        let expected = (!digits.is_empty() && digits.len() <= most && digits.chars().all(|c| c.is_digit(radix)))
            .then(|| u64::from_str_radix(digits, radix).ok())
            .flatten();
        prop_assert_eq!(Id::parse(&text).ok().map(Id::get), expected);

        // The layout parser reads back what it writes.
        if let Ok(parsed) = Layout::parse(&text) {
            let again = Layout::parse(&parsed.spec()).unwrap();
            prop_assert_eq!(again.spec(), parsed.spec());
        }

        // decode: refused only for bits above the layout's width (a set
        // sign bit, or any bit above a narrow layout's); what it reads
        // composes back.
        match layout.decode(Id::new(value)) {
            Ok(d) => {
                prop_assert!(value <= layout.max_id().get());
                let bits: u32 = d.segments().iter().map(|s| u32::from(s.bits())).sum();
                prop_assert_eq!(bits, 64);
                let pairs: Vec<(&str, u64)> = d.fields().collect();
                prop_assert_eq!(layout.compose(d.timestamp_ms(), &pairs).unwrap(), Id::new(value));
            }
            Err(err) => {
                prop_assert!(value > layout.max_id().get());
                prop_assert_eq!(err.field(), Some("id"));
            }
        }
    }
}

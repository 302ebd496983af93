//! End-to-end tests of the public API: published examples, properties over
//! layouts and clock histories, a multi-threaded stress run, restarts.

use std::collections::HashSet;
use std::sync::Arc;

use proptest::prelude::*;
use snowflake::{
    Clock, ErrorKind, FileMarkStore, Generator, Id, Layout, ManualClock, MarkStore, SystemClock,
};

const EPOCH: i64 = 1288834974657;

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
    let max = twitter
        .compose(
            3487858230208,
            &[("datacenter", 31), ("machine", 31), ("sequence", 4095)],
        )
        .unwrap();
    assert_eq!(max.get(), 9223372036854775807);
    let err = twitter.compose(3487858230209, &[]).unwrap_err();
    assert!(
        err.to_string()
            .contains("3487858230208 (2080-07-10T17:30:30.208Z)"),
        "{err}"
    );
    for (field, bad) in [("datacenter", 32), ("machine", 32), ("sequence", 4096)] {
        let err = twitter.compose(EPOCH, &[(field, bad)]).unwrap_err();
        assert_eq!(err.field(), Some(field));
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
    assert!(twitter.decode(Id::new(1 << 63)).is_err());
    assert!(twitter.decode(Id::new(i64::MAX as u64)).is_ok());
}

/// IDs with decodings published by their owners or in other projects' docs.
#[test]
fn published_ids_decode_as_published() {
    let twitter = Layout::twitter();
    // Wikipedia's example tweet ID.
    let d = twitter.decode(Id::new(1541815603606036480)).unwrap();
    assert_eq!(d.time().to_string(), "2022-06-28T16:07:40.105Z");
    assert_eq!(
        d.fields().collect::<Vec<_>>(),
        [("datacenter", 11), ("machine", 26), ("sequence", 0)]
    );
    // Twitter's developer docs: tweet 1212092628029698048 was posted
    // "Tue Dec 31 19:26:16 +0000 2019"; its ID says 19:26:16.771.
    let d = twitter.decode(Id::new(1212092628029698048)).unwrap();
    assert_eq!(d.time().to_string(), "2019-12-31T19:26:16.771Z");
    // Discord's documentation example.
    let discord = Layout::discord();
    let d = discord.decode(Id::new(175928847299117063)).unwrap();
    assert_eq!(d.timestamp_ms(), 1462015105796);
    assert_eq!(d.time().to_string(), "2016-04-30T11:18:25.796Z");
    assert_eq!(
        d.fields().collect::<Vec<_>>(),
        [("worker", 1), ("process", 0), ("increment", 7)]
    );
    // Discord's API docs: user ID 80351110224678912, made 2015-08-10.
    let d = discord.decode(Id::new(80351110224678912)).unwrap();
    assert_eq!(d.time().to_string(), "2015-08-10T17:26:37.529Z");
    // Sonyflake's README: the ID's upper bits are 10 ms units since 2014-09-01.
    let sony = Layout::sonyflake();
    let id = sony
        .compose(
            1409529600000 + 12_345_670,
            &[("sequence", 3), ("machine", 258)],
        )
        .unwrap();
    assert_eq!(id.get(), (1_234_567u64 << 24) | (3 << 16) | 258);
    // Instagram's engineering blog: 41 bits of ms since their epoch, 13-bit
    // shard 1341, 10-bit sequence 7.
    let insta = Layout::instagram();
    let id = insta
        .compose(
            1314220021721 + 1387263000,
            &[("shard", 1341), ("sequence", 7)],
        )
        .unwrap();
    assert_eq!(id.get(), (1387263000u64 << 23) | (1341 << 10) | 7);
    // Mastodon: 48 bits of Unix ms and 16 bits of sequence.
    let masto = Layout::mastodon();
    let d = masto.decode(Id::new(109_372_843_387_334_656)).unwrap();
    assert_eq!(d.timestamp_ms(), 109_372_843_387_334_656 >> 16);
    assert_eq!(d.time().to_string(), "2022-11-19T22:32:26.413Z");
}

#[test]
fn bounds_cover_the_window_and_reject_bad_windows() {
    let twitter = Layout::twitter();
    let b = twitter.bounds(1288834975657, 1288834975659).unwrap();
    let inside = twitter
        .compose(1288834975658, &[("machine", 31), ("sequence", 4095)])
        .unwrap();
    assert!(b.range().contains(&inside));
    let before = twitter
        .compose(
            1288834975656,
            &[("datacenter", 31), ("machine", 31), ("sequence", 4095)],
        )
        .unwrap();
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

        // The ID parser: decimal, or hexadecimal after 0x.
        let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => (hex, 16),
            None => (text.as_str(), 10),
        };
        let expected = (!digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)))
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

// ---------------------------------------------------------------- generator

/// One step of a clock history for the property test.
#[derive(Clone, Debug)]
enum Step {
    /// Issue this many IDs without moving the clock.
    Issue(u16),
    Forward(u16),
    Back(u16),
    Jump(u32),
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1u16..600).prop_map(Step::Issue),
        2 => (1u16..20).prop_map(Step::Forward),
        2 => (1u16..12).prop_map(Step::Back),
        1 => (1u32..100_000).prop_map(Step::Jump),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// IDs only grow, whatever the clock does; an error comes exactly when
    /// the clock is behind the last issued time by more than the tolerance.
    #[test]
    fn ids_increase_over_any_clock_history(steps in prop::collection::vec(arb_step(), 1..40), tolerance in 0u64..8) {
        // A small sequence makes exhaustion (and its waits) common.
        let layout = Layout::parse("time:41,node:18,sequence:4").unwrap();
        let start = 1_700_000_000_000;
        let clock = Arc::new(ManualClock::new(start));
        let generator = Generator::builder(layout.clone()).node(&[("node", 5)]).clock(clock.clone()).tolerance_ms(tolerance).build().unwrap();
        let mut last: Option<Id> = None;
        let mut last_ms = i64::MIN / 2;
        for step in steps {
            match step {
                Step::Forward(ms) => clock.advance(i64::from(ms)),
                Step::Back(ms) => clock.advance(-i64::from(ms)),
                Step::Jump(ms) => clock.advance(i64::from(ms)),
                Step::Issue(n) => {
                    for _ in 0..n {
                        let now = clock.now_ms();
                        let behind = last_ms - now;
                        match generator.next_id() {
                            Ok(id) => {
                                prop_assert!(behind <= tolerance as i64, "issued although {behind} ms behind");
                                if let Some(prev) = last { prop_assert!(id > prev); }
                                let d = layout.decode(id).unwrap();
                                prop_assert_eq!(d.field("node"), Some(5));
                                // Never stamped before the clock read, nor ahead of the
                                // clock after any wait (no lead was allowed).
                                prop_assert!(d.timestamp_ms() >= now.min(last_ms));
                                prop_assert!(d.timestamp_ms() <= clock.now_ms().max(last_ms));
                                last_ms = d.timestamp_ms();
                                last = Some(id);
                            }
                            Err(err) => {
                                prop_assert_eq!(err.kind(), ErrorKind::ClockBackwards);
                                prop_assert!(behind > tolerance as i64, "refused although only {behind} ms behind: {err}");
                                prop_assert_eq!(err.clock_backwards_ms(), Some(behind as u64));
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Every bound in milliseconds, whatever the tick (1 to 1000 ms): a call
    /// fails exactly when the clock is behind the last ID's time by more than
    /// the tolerance and the lead, and the error gives that size in ms; no ID
    /// carries a time more than the lead ahead of the clock unless an earlier
    /// ID already did; no ID is older than the clock's unit; IDs only grow.
    #[test]
    fn bounds_hold_in_milliseconds_whatever_the_tick(
        tick in 1u64..=1000,
        tolerance in 0u64..1500,
        lead in 0u64..=1000,
        offset in 0i64..1000,
        steps in prop::collection::vec((0u8..4, 1u64..3000), 1..60),
    ) {
        // Four IDs a unit, so that exhaustion, waits and borrowing are common.
        let layout = Layout::builder().epoch_ms(EPOCH).tick_ms(tick).time_bits(41).field("node", 20).sequence("sequence", 2).build().unwrap();
        let clock = Arc::new(ManualClock::new(EPOCH + 1_000_000_000 + offset));
        let generator = Generator::builder(layout.clone()).node(&[("node", 9)]).clock(clock.clone()).tolerance_ms(tolerance).max_lead_ms(lead).build().unwrap();
        let (tolerance, lead) = (tolerance as i64, lead as i64);
        let floor = |t: i64| t - (t - EPOCH) % tick as i64;
        let mut last: Option<(Id, i64)> = None;
        for (kind, size) in steps {
            match kind {
                0 => {
                    for _ in 0..size % 12 + 1 {
                        let now = clock.now_ms();
                        let behind = last.map_or(i64::MIN, |(_, t)| t - now);
                        match generator.next_id() {
                            Ok(id) => {
                                prop_assert!(behind <= tolerance + lead, "issued although {} ms behind", behind);
                                let d = layout.decode(id).unwrap();
                                prop_assert_eq!(d.field("node"), Some(9));
                                let t = d.timestamp_ms();
                                let last_t = last.map_or(i64::MIN, |(_, t)| t);
                                if let Some((prev, _)) = last {
                                    prop_assert!(id > prev);
                                }
                                prop_assert!(t >= floor(now).max(last_t), "{} is older than the clock {}", t, now);
                                if t > last_t {
                                    prop_assert!(t <= clock.now_ms() + lead, "{} is more than {} ms ahead of {}", t, lead, clock.now_ms());
                                }
                                prop_assert!(generator.stats().lead_ms as i64 <= lead);
                                last = Some((id, t));
                            }
                            Err(err) => {
                                prop_assert_eq!(err.kind(), ErrorKind::ClockBackwards);
                                prop_assert!(behind > tolerance + lead, "refused although only {} ms behind: {}", behind, err);
                                prop_assert_eq!(err.clock_backwards_ms(), Some(behind as u64));
                                let expected = format!("backwards by {behind} ms, more than the {tolerance} ms tolerated");
                                prop_assert!(err.to_string().contains(&expected), "{}", err);
                                prop_assert!(generator.stats().clock_backwards_max_ms as i64 >= behind);
                                break;
                            }
                        }
                    }
                }
                1 => clock.advance(size as i64),
                2 => clock.advance(-((size % (tolerance + lead + 2 * tick as i64 + 3) as u64) as i64 + 1)),
                _ => clock.advance((size % tick) as i64 + 1),
            }
        }
    }
}

#[test]
fn exhausted_sequence_waits_for_the_next_millisecond() {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .build()
        .unwrap();
    let batch: Vec<Id> = generator.next_ids(5000).unwrap().collect();
    assert_eq!(batch.len(), 4096);
    assert_eq!(clock.now_ms(), 1_700_000_000_000);
    let next = generator.next_id().unwrap();
    // The manual clock jumps to the time waited for: exactly one ms later.
    assert_eq!(clock.now_ms(), 1_700_000_000_001);
    let twitter = Layout::twitter();
    let d = twitter.decode(next).unwrap();
    assert_eq!(
        (d.timestamp_ms(), d.sequence()),
        (1_700_000_000_001, Some(0))
    );
    let stats = generator.stats();
    assert_eq!(stats.issued, 4097);
    assert_eq!(stats.exhaustion_waits, 1);
    assert_eq!(stats.lead_ms, 0);
}

#[test]
fn bounded_lead_borrows_from_the_future_and_reports_it() {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .max_lead_ms(2)
        .build()
        .unwrap();
    for lead in 0..3 {
        assert_eq!(generator.next_ids(4096).unwrap().len(), 4096);
        assert_eq!(generator.stats().lead_ms, lead, "the lead actually taken");
    }
    assert_eq!(
        clock.now_ms(),
        1_700_000_000_000,
        "no wait while the lead lasts"
    );
    let stats = generator.stats();
    assert_eq!(stats.lead_ms, 2);
    assert_eq!(stats.lead_issues, 2);
    assert!(
        Generator::builder(Layout::twitter())
            .max_lead_ms(5000)
            .build()
            .is_err()
    );
}

#[test]
fn clock_far_behind_is_an_error_that_recovers() {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .build()
        .unwrap();
    let first = generator.next_id().unwrap();
    clock.advance(-3);
    // Within the tolerance: still issues, still increasing.
    let second = generator.next_id().unwrap();
    assert!(second > first);
    clock.advance(-1000);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ClockBackwards);
    assert_eq!(err.clock_backwards_ms(), Some(1003));
    assert!(generator.ready().is_err());
    clock.advance(1004);
    assert!(generator.ready().is_ok());
    assert!(generator.next_id().unwrap() > second);
    assert_eq!(generator.stats().clock_backwards_max_ms, 1003);
}

#[test]
fn time_field_running_out_is_an_error() {
    let layout = Layout::parse("time:4,node:47,sequence:12").unwrap();
    let clock = Arc::new(ManualClock::new(15));
    let generator = Generator::builder(layout)
        .clock(clock.clone())
        .build()
        .unwrap();
    // The clock is in the last unit the field holds: one unit's worth is left.
    assert_eq!(generator.next_ids(5000).unwrap().len(), 4096);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimeExhausted);
    clock.set(16);
    assert_eq!(
        generator.next_id().unwrap_err().kind(),
        ErrorKind::TimeExhausted
    );
}

/// With the sequence right below a time field that reaches the 64th bit
/// (a 52-bit time field atop a 12-bit sequence),
/// the next sequence number of a used-up last unit would carry out of the
/// ID: the answer is still "time ran out", never a panic or a wrapped ID.
#[test]
fn a_full_sequence_in_the_last_unit_of_a_64_bit_layout() {
    let layout = Layout::parse("time:52,sequence:12").unwrap();
    let last_ms = layout.last_timestamp_ms();
    let clock = Arc::new(ManualClock::new(last_ms));
    let generator = Generator::builder(layout)
        .clock(clock.clone())
        .build()
        .unwrap();
    let batch = generator.next_ids(5000).unwrap();
    assert_eq!(batch.len(), 4096);
    assert_eq!(batch.last_id().unwrap().get(), u64::MAX);
    for _ in 0..2 {
        assert_eq!(
            generator.next_id().unwrap_err().kind(),
            ErrorKind::TimeExhausted
        );
    }
}

#[test]
fn generator_checks_its_node_and_layout() {
    assert!(Generator::new(Layout::parse("time:41,node:22").unwrap(), &[]).is_err());
    let err = Generator::new(Layout::twitter(), &[("sequence", 1)]).unwrap_err();
    assert_eq!(err.field(), Some("sequence"));
    let err = Generator::new(Layout::twitter(), &[("worker", 1)]).unwrap_err();
    assert!(err.to_string().contains("datacenter, machine, sequence"));
}

/// Eight threads share one generator on the real clock; sorting finds any
/// duplicate, and every ID's time lies within the run's wall-clock window.
#[test]
fn stress_eight_threads_share_one_generator() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 1_000_000;
    let layout = Layout::twitter();
    let generator =
        Arc::new(Generator::new(layout.clone(), &[("datacenter", 3), ("machine", 9)]).unwrap());
    let start = SystemClock.now_ms();
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(generator.next_id().unwrap().get());
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::with_capacity(THREADS * PER_THREAD);
    for handle in handles {
        let ids = handle.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread saw IDs go down"
        );
        all.extend(ids);
    }
    let end = SystemClock.now_ms();
    all.sort_unstable();
    let duplicates = all.windows(2).filter(|w| w[0] == w[1]).count();
    assert_eq!(duplicates, 0);
    let first = layout.decode(Id::new(all[0])).unwrap().timestamp_ms();
    let last = layout
        .decode(Id::new(*all.last().unwrap()))
        .unwrap()
        .timestamp_ms();
    assert!(
        first >= start && last <= end,
        "{start} <= {first}..{last} <= {end}"
    );
    assert_eq!(generator.stats().issued, (THREADS * PER_THREAD) as u64);
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snowflake-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn restart_from_the_state_file_never_goes_back() {
    let dir = temp_dir("restart");
    let path = dir.join("mark");
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let build = || {
        Generator::builder(Layout::twitter())
            .clock(clock.clone())
            .store(FileMarkStore::new(&path))
            .reserve_ms(1000)
            .build()
    };
    let before = build().unwrap();
    let mut last = Id::new(0);
    for _ in 0..20 {
        for id in before.next_ids(1000).unwrap() {
            last = id;
        }
        clock.advance(7);
    }
    let mark = FileMarkStore::new(&path).load().unwrap().unwrap();
    assert!(mark >= Layout::twitter().decode(last).unwrap().timestamp_ms());
    assert!(before.stats().mark_writes >= 1);
    drop(before);

    // The clock is set back, but by less than the tolerance plus the window
    // the mark reserves: the restarted generator waits past the mark rather
    // than reuse any time.
    clock.set(mark - 900);
    let after = build().unwrap();
    assert!(clock.now_ms() > mark);
    let first = after.next_id().unwrap();
    assert!(first > last, "{first} <= {last}");
    assert!(Layout::twitter().decode(first).unwrap().timestamp_ms() > mark);

    // A clean close shrinks the mark to the last ID issued.
    let closed_at = Layout::twitter().decode(first).unwrap().timestamp_ms();
    after.close().unwrap();
    assert_eq!(FileMarkStore::new(&path).load().unwrap(), Some(closed_at));
    let again = build().unwrap();
    assert!(again.next_id().unwrap() > first);
    drop(again);

    // Set back further than the tolerance and the window: it refuses to start.
    let mark = FileMarkStore::new(&path).load().unwrap().unwrap();
    clock.set(mark - 60_000);
    let err = build().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(
        err.to_string().contains("behind the high-water mark"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn broken_state_file_is_a_clear_error() {
    let dir = temp_dir("broken");
    let path = dir.join("mark");
    std::fs::write(&path, "not a number\n").unwrap();
    let err = Generator::builder(Layout::twitter())
        .store(FileMarkStore::new(&path))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(
        err.to_string().contains(&format!(
            "cannot use {}: it is not a mark file",
            path.display()
        )),
        "{err}"
    );
    let missing = FileMarkStore::new(dir.join("no/such/dir/mark"));
    assert!(missing.open(&Layout::twitter()).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The builder opens the store with its own layout: a state file of another
/// layout, or one that a live generator holds, stops it from being built.
#[test]
fn the_builder_opens_the_store_for_its_layout_and_for_itself_alone() {
    let dir = temp_dir("opened");
    let path = dir.join("mark");
    let build = |layout: Layout| {
        Generator::builder(layout)
            .clock(Arc::new(ManualClock::new(1_700_000_000_000)))
            .store(FileMarkStore::new(&path))
            .build()
    };
    let first = build(Layout::twitter()).unwrap();
    first.next_id().unwrap();
    let err = build(Layout::twitter()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StoreInUse);
    assert!(
        err.to_string()
            .contains(&format!("in use by process {}", std::process::id())),
        "{err}"
    );
    first.close().unwrap();
    let err = build(Layout::discord()).unwrap_err();
    assert!(
        err.to_string().contains("belongs to layout time:41"),
        "{err}"
    );
    // Shared through an Arc, the store is still opened for the layout.
    let shared = Arc::new(FileMarkStore::new(&path));
    let again = Generator::builder(Layout::twitter())
        .clock(Arc::new(ManualClock::new(1_700_000_000_000)))
        .store(shared.clone())
        .build()
        .unwrap();
    again.next_id().unwrap();
    assert!(FileMarkStore::new(&path).open(&Layout::twitter()).is_err());
    drop(again);
    drop(shared);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn batches_from_many_threads_never_overlap() {
    let generator = Arc::new(Generator::new(Layout::twitter(), &[]).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..200 {
                    ids.extend(generator.next_ids(300).unwrap().map(Id::get));
                }
                ids
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
}

/// A clock step measured in milliseconds on a 10 ms tick: 5 ms behind the
/// last ID's time is tolerated, 6 ms is not, and the error says 6.
#[test]
fn tolerance_is_in_milliseconds_on_a_10_ms_tick() {
    // The start of a sonyflake unit.
    let start = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(start + 9));
    let generator = Generator::builder(Layout::sonyflake())
        .node(&[("machine", 1)])
        .clock(clock.clone())
        .tolerance_ms(5)
        .build()
        .unwrap();
    let first = generator.next_id().unwrap();
    clock.set(start);
    assert!(
        generator.next_id().unwrap() > first,
        "same unit: not behind"
    );
    clock.set(start - 5);
    assert!(generator.next_id().unwrap() > first, "5 ms is tolerated");
    assert_eq!(generator.stats().lead_ms, 0, "a step back is not a lead");
    clock.set(start - 6);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.clock_backwards_ms(), Some(6));
    assert!(
        err.to_string()
            .contains("backwards by 6 ms, more than the 5 ms"),
        "{err}"
    );
    clock.set(start - 19);
    assert_eq!(
        generator.next_id().unwrap_err().clock_backwards_ms(),
        Some(19)
    );
    assert_eq!(generator.stats().clock_backwards_max_ms, 19);
}

/// A lead shorter than a tick borrows the next unit only when the clock is
/// within the lead of it, so no ID is ever more than the lead ahead.
#[test]
fn lead_is_in_milliseconds_on_a_10_ms_tick() {
    let start = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(start));
    let generator = Generator::builder(Layout::sonyflake())
        .clock(clock.clone())
        .max_lead_ms(1)
        .build()
        .unwrap();
    let sony = Layout::sonyflake();
    assert_eq!(generator.next_ids(256).unwrap().len(), 256);
    // The next unit starts 10 ms ahead: too far to borrow, so it waits.
    let id = generator.next_id().unwrap();
    assert_eq!(sony.decode(id).unwrap().timestamp_ms(), start + 10);
    assert_eq!(clock.now_ms(), start + 10, "waited for the unit");
    assert_eq!(generator.stats().lead_issues, 0);
    // 1 ms before the next unit, borrowing it is within the lead.
    clock.set(start + 19);
    assert_eq!(generator.next_ids(256).unwrap().len(), 255);
    let id = generator.next_id().unwrap();
    assert_eq!(sony.decode(id).unwrap().timestamp_ms(), start + 20);
    assert_eq!(clock.now_ms(), start + 19, "borrowed, not waited");
    let stats = generator.stats();
    assert_eq!((stats.lead_issues, stats.lead_ms), (1, 1));
    // Issuing within the lead is not a clock that went back.
    generator.next_id().unwrap();
    let stats = generator.stats();
    assert_eq!(
        (stats.clock_backwards, stats.clock_backwards_max_ms),
        (0, 0)
    );
}

/// A restart whose clock is behind the stored mark: the allowance (tolerance
/// plus reserve window) and the size in the error are milliseconds.
#[test]
fn restart_behind_the_mark_is_measured_in_milliseconds() {
    let start = 1_700_000_000_000;
    // The mark is the last millisecond of the unit that starts at start + 30.
    let store = MemStore::with_mark(start + 39);
    let build = |now: i64| {
        let clock = Arc::new(ManualClock::new(now));
        let built = Generator::builder(Layout::sonyflake())
            .clock(clock.clone())
            .tolerance_ms(5)
            .reserve_ms(20)
            .store(store.clone())
            .build();
        (built, clock)
    };
    // 27 ms behind the mark's unit; 5 + 20 ms are allowed.
    let err = build(start + 3).0.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(
        err.to_string()
            .contains("is 27 ms behind the high-water mark"),
        "{err}"
    );
    assert!(
        err.to_string().contains("more than the 25 ms tolerated"),
        "{err}"
    );
    // 25 ms behind: it waits, and starts after the mark's unit.
    let (generator, clock) = build(start + 5);
    let generator = generator.unwrap();
    assert_eq!(clock.now_ms(), start + 40);
    let id = generator.next_id().unwrap();
    assert_eq!(
        Layout::sonyflake().decode(id).unwrap().timestamp_ms(),
        start + 40
    );
}

/// A mark store in memory that can be told to fail.
#[derive(Clone, Default)]
struct MemStore(Arc<MemState>);

#[derive(Default)]
struct MemState {
    mark: std::sync::Mutex<Option<i64>>,
    failing: std::sync::atomic::AtomicBool,
}

impl MemStore {
    fn with_mark(mark_ms: i64) -> Self {
        let store = MemStore::default();
        *store.0.mark.lock().unwrap() = Some(mark_ms);
        store
    }

    fn mark(&self) -> Option<i64> {
        *self.0.mark.lock().unwrap()
    }

    fn fail(&self, failing: bool) {
        self.0
            .failing
            .store(failing, std::sync::atomic::Ordering::SeqCst);
    }
}

impl MarkStore for MemStore {
    fn load(&self) -> Result<Option<i64>, snowflake::Error> {
        Ok(self.mark())
    }

    fn save(&self, mark_ms: i64) -> Result<(), snowflake::Error> {
        if self.0.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(snowflake::Error::store_failure("the disk is full"));
        }
        *self.0.mark.lock().unwrap() = Some(mark_ms);
        Ok(())
    }
}

/// After a restart every sequence number of the mark's unit counts as
/// issued, on a layout whose sequence sits above the node field (sonyflake)
/// as on one where it is the lowest: a clock set back into that unit gets
/// no ID of it, only one of the next unit.
#[test]
fn the_marks_unit_is_used_up_after_a_restart_whatever_the_sequences_place() {
    let layout = Layout::sonyflake();
    let mark = 1_700_000_000_005;
    let mark_unit_start = layout.timestamp_ms(layout.time_units(mark).unwrap());
    let clock = Arc::new(ManualClock::new(mark + 20));
    let generator = Generator::builder(layout.clone())
        .clock(clock.clone())
        .store(MemStore::with_mark(mark))
        .build()
        .unwrap();
    clock.set(mark_unit_start);
    let id = generator.next_id().unwrap();
    let time = layout.decode(id).unwrap().timestamp_ms();
    assert!(
        time > mark,
        "an ID at {time} ms, in the unit of the mark ({mark} ms) issued before the restart"
    );
}

/// The mark is written before any ID in its window is issued: when it cannot
/// be written, `next_id` fails and issues nothing; within a mark already
/// written, a failed early top-up is no error.
#[test]
fn a_failing_mark_store_stops_issuing_and_issues_nothing() {
    let start = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(start));
    let store = MemStore::default();
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .reserve_ms(10)
        .store(store.clone())
        .build()
        .unwrap();
    let first = generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 10));
    store.fail(true);
    // Within the written mark, past half the window: the top-up fails quietly.
    clock.set(start + 8);
    let covered = generator.next_id().unwrap();
    assert!(covered > first);
    assert_eq!(store.mark(), Some(start + 10));
    // Past the mark, nothing may be issued until it is written.
    clock.set(start + 11);
    let issued = generator.stats().issued;
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(err.to_string().contains("the disk is full"), "{err}");
    assert!(generator.next_ids(100).is_err());
    assert_eq!(generator.stats().issued, issued, "nothing issued");
    assert_eq!(generator.stats().mark_ms, Some(start + 10));
    store.fail(false);
    let next = generator.next_id().unwrap();
    assert!(next > covered);
    assert_eq!(generator.stats().issued, issued + 1);
    let time = Layout::twitter().decode(next).unwrap().timestamp_ms();
    assert_eq!(time, start + 11);
    assert!(store.mark().unwrap() >= time, "the mark covers the ID");
    assert_eq!(generator.stats().mark_writes, 2);
}

#[test]
fn settings_beyond_their_limits_are_errors() {
    let twitter = || Generator::builder(Layout::twitter());
    // Each limit itself is allowed.
    twitter()
        .tolerance_ms(Generator::MAX_TOLERANCE_MS)
        .max_lead_ms(Generator::MAX_LEAD_MS)
        .reserve_ms(Generator::MAX_RESERVE_MS)
        .build()
        .unwrap();
    for (builder, field, message) in [
        (
            twitter().reserve_ms(60_001),
            "reserve_ms",
            "reserve_ms 60001 is not allowed; the reserve is at most 60000 ms (Generator::MAX_RESERVE_MS)",
        ),
        (
            twitter().tolerance_ms(60_001),
            "tolerance_ms",
            "tolerance_ms 60001 is not allowed; the tolerance is at most 60000 ms (Generator::MAX_TOLERANCE_MS)",
        ),
        (
            twitter().max_lead_ms(1_001),
            "max_lead_ms",
            "max_lead_ms 1001 is not allowed; the lead is at most 1000 ms (Generator::MAX_LEAD_MS)",
        ),
    ] {
        let err = builder.build().unwrap_err();
        assert_eq!(err.field(), Some(field));
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), message);
    }
}

/// The mark is topped up early, once half its window is used, so callers
/// rarely wait on the store; before that, nothing is written.
#[test]
fn the_mark_is_topped_up_at_half_the_window() {
    let start = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(start));
    let store = MemStore::default();
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .reserve_ms(10)
        .store(store.clone())
        .build()
        .unwrap();
    generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 10));
    // Less than half the window used: no write.
    clock.set(start + 5);
    generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 10));
    assert_eq!(generator.stats().mark_writes, 1);
    // More than half: topped up a window past the unit in use.
    clock.set(start + 6);
    generator.next_id().unwrap();
    assert_eq!(store.mark(), Some(start + 16));
    assert_eq!(generator.stats().mark_writes, 2);
    assert_eq!(generator.stats().mark_ms, Some(start + 16));
    // A clean close lowers the mark to the last unit issued.
    generator.close().unwrap();
    assert_eq!(store.mark(), Some(start + 6));
}

/// A mark that no run of this layout could have written is refused, with
/// the file's value and the layout's range, never read as a fresh start.
#[test]
fn a_mark_outside_the_layout_is_refused() {
    let layout = Layout::parse("time:20,node:31,sequence:12").unwrap();
    let clock = Arc::new(ManualClock::new(1_000));
    for mark in [-1, layout.last_timestamp_ms() + 1] {
        let err = Generator::builder(layout.clone())
            .clock(clock.clone())
            .store(MemStore::with_mark(mark))
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        let text = err.to_string();
        assert!(
            text.contains(&format!("the stored mark {mark} (")),
            "{text}"
        );
        assert!(text.contains("is outside layout time:20,node:31,sequence:12's time range, 1970-01-01T00:00:00.000Z to"), "{text}");
    }
}

/// After a restart the clock is set back: IDs continue above the mark, never
/// at or below it, although the clock reads a time below it.
#[test]
fn after_a_restart_a_clock_set_back_stays_above_the_mark() {
    let start = 1_700_000_000_000;
    let mark = start + 1_000;
    let clock = Arc::new(ManualClock::new(mark - 3));
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .store(MemStore::with_mark(mark))
        .build()
        .unwrap();
    // It waited until past the mark.
    assert_eq!(clock.now_ms(), mark + 1);
    clock.set(mark - 4);
    let id = generator.next_id().unwrap();
    let time = Layout::twitter().decode(id).unwrap().timestamp_ms();
    assert!(time > mark, "issued at {time}, the mark is {mark}");
    assert_eq!(generator.stats().issued, 1);
}

/// A store shared in an `Arc` (as a service shares it with its metrics) is
/// the same store: its mark is read at start and written as IDs are issued.
#[test]
fn a_store_in_an_arc_is_read_and_written_through() {
    let start = 1_700_000_000_000;
    let mark = start + 1_000;
    let clock = Arc::new(ManualClock::new(mark - 3));
    let store = MemStore::with_mark(mark);
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .reserve_ms(10)
        .store(Arc::new(store.clone()))
        .build()
        .unwrap();
    // Read through the Arc: the start waited until past the mark.
    assert_eq!(clock.now_ms(), mark + 1);
    let id = generator.next_id().unwrap();
    let time = Layout::twitter().decode(id).unwrap().timestamp_ms();
    assert_eq!(time, mark + 1);
    // Written through the Arc.
    assert_eq!(store.mark(), Some(mark + 11));
}

/// Every counter of the stats, after a history whose answer is known.
#[test]
fn stats_count_exactly_what_happened() {
    let start = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(start));
    let layout = Layout::parse("time:41,node:20,sequence:2").unwrap();
    let generator = Generator::builder(layout.clone())
        .clock(clock.clone())
        .tolerance_ms(3)
        .build()
        .unwrap();
    assert!(Arc::ptr_eq(generator.clock(), &clock));
    assert_eq!(generator.layout(), &layout);
    assert_eq!(generator.stats(), snowflake::GeneratorStats::default());
    // Four IDs a unit: the fifth waits for the next millisecond.
    assert_eq!(generator.next_ids(4).unwrap().len(), 4);
    generator.next_id().unwrap();
    assert_eq!(clock.now_ms(), start + 1);
    // Two ms back: tolerated, counted once per call.
    clock.set(start - 1);
    generator.ready().unwrap();
    generator.next_id().unwrap();
    // Five ms back: refused by next_id and by ready.
    clock.set(start - 4);
    assert_eq!(generator.ready().unwrap_err().clock_backwards_ms(), Some(5));
    assert!(generator.next_id().is_err());
    let stats = generator.stats();
    assert_eq!(stats.issued, 6);
    assert_eq!(stats.exhaustion_waits, 1);
    assert_eq!(stats.clock_backwards, 2);
    assert_eq!(stats.clock_backwards_max_ms, 5);
    assert_eq!((stats.lead_ms, stats.lead_issues), (0, 0));
    assert_eq!((stats.mark_writes, stats.mark_ms), (0, None));
    let debug = format!("{generator:?}");
    assert!(
        debug.starts_with("Generator { layout: \"time:41,node:20,sequence:2\""),
        "{debug}"
    );
    assert!(debug.contains("issued: 6"), "{debug}");
    let builder = format!("{:?}", Generator::builder(layout).tolerance_ms(7));
    assert!(builder.contains("tolerance_ms: 7"), "{builder}");
}

/// The first millisecond a layout can encode is usable; the one before is
/// an error naming the epoch.
#[test]
fn the_epoch_itself_is_the_first_usable_time() {
    let layout = Layout::parse("time:41,node:10,sequence:12").unwrap();
    let clock = ManualClock::new(-1);
    // The generator borrows the clock: `&C` is a clock too.
    let generator = Generator::builder(layout.clone())
        .clock(&clock)
        .build()
        .unwrap();
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.field(), Some("timestamp"));
    assert!(
        err.to_string().contains("is before the layout's epoch 0"),
        "{err}"
    );
    assert!(generator.ready().is_err());
    clock.set(0);
    let batch: Vec<Id> = generator.next_ids(5000).unwrap().collect();
    // A fresh generator's state is (unit 0, sequence 0), counted as used,
    // so at the epoch itself the sequence starts at 1.
    assert_eq!(batch.len(), 4095);
    assert_eq!(batch[0], Id::new(1));
    // Used up: the wait goes through `&ManualClock` and moves it on.
    let next = generator.next_id().unwrap();
    assert_eq!(layout.decode(next).unwrap().timestamp_ms(), 1);
    assert_eq!(clock.now_ms(), 1);
}

/// A generator on the shared cached clock, borrowed as `&'static`.
#[test]
fn a_generator_runs_on_the_cached_clock() {
    let generator = Generator::builder(Layout::twitter())
        .clock(snowflake::CachedClock::shared())
        .build()
        .unwrap();
    let before = SystemClock.now_ms();
    let ids: Vec<Id> = (0..10_000).map(|_| generator.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let first = Layout::twitter().decode(ids[0]).unwrap().timestamp_ms();
    assert!((first - before).abs() < 1_000, "{first} vs {before}");
}

/// A restart with the clock inside the mark's own unit still waits for the
/// next one.
#[test]
fn a_restart_in_the_marks_unit_waits_for_the_next() {
    let mark = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(mark));
    let generator = Generator::builder(Layout::twitter())
        .clock(clock.clone())
        .store(MemStore::with_mark(mark))
        .build()
        .unwrap();
    assert_eq!(clock.now_ms(), mark + 1);
    let id = generator.next_id().unwrap();
    assert_eq!(
        Layout::twitter().decode(id).unwrap().timestamp_ms(),
        mark + 1
    );
}

/// The lead never borrows a unit past the end of the time field: there the
/// answer is "time ran out", not an ID whose time wrapped into the sign bit.
#[test]
fn the_lead_never_borrows_past_the_time_field() {
    let layout = Layout::parse("time:4,node:47,sequence:12").unwrap();
    let clock = Arc::new(ManualClock::new(15));
    let generator = Generator::builder(layout)
        .clock(clock.clone())
        .max_lead_ms(Generator::MAX_LEAD_MS)
        .build()
        .unwrap();
    assert_eq!(generator.next_ids(5000).unwrap().len(), 4096);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimeExhausted);
    assert_eq!(generator.stats().lead_issues, 0);
}

/// On a 10 ms tick the stored mark is the last millisecond of the reserved
/// unit, so that a restart at any millisecond of that unit waits it out.
#[test]
fn the_mark_is_the_last_millisecond_of_its_unit() {
    let start = 1_700_000_000_000;
    let clock = Arc::new(ManualClock::new(start + 3));
    let store = MemStore::default();
    let generator = Generator::builder(Layout::sonyflake())
        .clock(clock.clone())
        .reserve_ms(20)
        .store(store.clone())
        .build()
        .unwrap();
    generator.next_id().unwrap();
    // Two units of 10 ms past the unit in use, to its last millisecond.
    assert_eq!(store.mark(), Some(start + 29));
    assert_eq!(generator.stats().mark_ms, Some(start + 29));
}

/// On a layout whose sequence is not the lowest field (sonyflake: sequence
/// above machine), a batch steps by the sequence's place value and keeps
/// the node's bits.
#[test]
fn a_batch_steps_by_the_sequence_on_any_layout() {
    let sony = Layout::sonyflake();
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let generator = Generator::builder(sony.clone())
        .node(&[("machine", 258)])
        .clock(clock.clone())
        .build()
        .unwrap();
    let first = generator.next_id().unwrap();
    let batch: Vec<Id> = generator.next_ids(3).unwrap().collect();
    let sequences: Vec<_> = std::iter::once(first)
        .chain(batch)
        .map(|id| {
            let d = sony.decode(id).unwrap();
            assert_eq!(d.field("machine"), Some(258));
            d.sequence().unwrap()
        })
        .collect();
    assert_eq!(sequences, [0, 1, 2, 3]);
}

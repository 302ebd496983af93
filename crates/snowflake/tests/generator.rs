//! One generator on a manual clock: IDs only grow over any clock history,
//! waits, the lead, the tolerance in milliseconds whatever the tick, the
//! time field's end, settings and stats.

use std::sync::Arc;

use proptest::prelude::*;
use snowflake::{Clock, ErrorKind, Generator, Id, Layout, ManualClock, SystemClock};

use crate::support::{EPOCH, on_manual_clock};

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
        let (builder, clock) = on_manual_clock(layout.clone(), start);
        let generator = builder.node(&[("node", 5)]).tolerance_ms(tolerance).build().unwrap();
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
        let (builder, clock) = on_manual_clock(layout.clone(), EPOCH + 1_000_000_000 + offset);
        let generator = builder.node(&[("node", 9)]).tolerance_ms(tolerance).max_lead_ms(lead).build().unwrap();
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
    let (builder, clock) = on_manual_clock(Layout::twitter(), 1_700_000_000_000);
    let generator = builder.build().unwrap();
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
    let (builder, clock) = on_manual_clock(Layout::twitter(), 1_700_000_000_000);
    let generator = builder.max_lead_ms(2).build().unwrap();
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
    let (builder, clock) = on_manual_clock(Layout::twitter(), 1_700_000_000_000);
    let generator = builder.build().unwrap();
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
    let (builder, clock) = on_manual_clock(layout, 15);
    let generator = builder.build().unwrap();
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
    let (builder, _) = on_manual_clock(layout, last_ms);
    let generator = builder.build().unwrap();
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

/// A clock step measured in milliseconds on a 10 ms tick: 5 ms behind the
/// last ID's time is tolerated, 6 ms is not, and the error says 6.
#[test]
fn tolerance_is_in_milliseconds_on_a_10_ms_tick() {
    // The start of a sonyflake unit.
    let start = 1_700_000_000_000;
    let (builder, clock) = on_manual_clock(Layout::sonyflake(), start + 9);
    let generator = builder
        .node(&[("machine", 1)])
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
    let (builder, clock) = on_manual_clock(Layout::sonyflake(), start);
    let generator = builder.max_lead_ms(1).build().unwrap();
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

/// Every counter of the stats, after a history whose answer is known.
#[test]
fn stats_count_exactly_what_happened() {
    let start = 1_700_000_000_000;
    let layout = Layout::parse("time:41,node:20,sequence:2").unwrap();
    let (builder, clock) = on_manual_clock(layout.clone(), start);
    let generator = builder.tolerance_ms(3).build().unwrap();
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

/// The lead never borrows a unit past the end of the time field: there the
/// answer is "time ran out", not an ID whose time wrapped into the sign bit.
#[test]
fn the_lead_never_borrows_past_the_time_field() {
    let layout = Layout::parse("time:4,node:47,sequence:12").unwrap();
    let (builder, _) = on_manual_clock(layout, 15);
    let generator = builder.max_lead_ms(Generator::MAX_LEAD_MS).build().unwrap();
    assert_eq!(generator.next_ids(5000).unwrap().len(), 4096);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimeExhausted);
    assert_eq!(generator.stats().lead_issues, 0);
}

/// On a layout whose sequence is not the lowest field (sonyflake: sequence
/// above machine), a batch steps by the sequence's place value and keeps
/// the node's bits.
#[test]
fn a_batch_steps_by_the_sequence_on_any_layout() {
    let sony = Layout::sonyflake();
    let (builder, _) = on_manual_clock(sony.clone(), 1_700_000_000_000);
    let generator = builder.node(&[("machine", 258)]).build().unwrap();
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
